/** This bridge's version (package.json's), for the CLI's --version and the doctor's report. */
export const BRIDGE_VERSION = '0.1.0';
