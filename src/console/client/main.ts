/** The console's client script: one bundle, the page's module chosen by <body data-page>. */
import { devicesPage } from './devices.ts';
import { inspectorPage } from './inspector.ts';
import { leasesPage } from './leases.ts';
import { releasesPage } from './releases.ts';
import { screenPage } from './screen.ts';

const pages: Record<string, () => void> = {
  devices: devicesPage,
  leases: leasesPage,
  releases: releasesPage,
  inspector: inspectorPage,
  screen: screenPage,
};

pages[document.body.dataset['page'] ?? '']?.();
