/**
 * The shell protocol codec (src/protocol/adb/shell-protocol.ts) is shared by the bridge (AdbClient) and the
 * simulator's adbd, so a bug in it could pass on both sides at once. These fixtures are written by
 * hand from the protocol's documentation (AOSP `adb/shell_protocol.h`): a packet is one id byte, a
 * u32 little-endian payload length, then the payload; ids stdin=0, stdout=1, stderr=2, exit=3,
 * close-stdin=4, window-size-change=5; the exit payload is one byte, the status.
 */
import { describe, expect, it } from 'vitest';
import {
  encodeShellExit,
  encodeShellHeader,
  encodeShellPacket,
  SHELL_CLOSE_STDIN,
  SHELL_EXIT,
  SHELL_HEADER_SIZE,
  SHELL_STDERR,
  SHELL_STDIN,
  SHELL_STDOUT,
  SHELL_WINDOW_SIZE,
  ShellPacketDecoder,
} from '../../src/protocol/adb/shell-protocol.ts';

const bytes = (...b: number[]) => Buffer.from(b);

describe('shell protocol ids and header (from shell_protocol.h)', () => {
  it('uses the documented ids and a 5-byte header', () => {
    expect([
      SHELL_STDIN,
      SHELL_STDOUT,
      SHELL_STDERR,
      SHELL_EXIT,
      SHELL_CLOSE_STDIN,
      SHELL_WINDOW_SIZE,
    ]).toEqual([0, 1, 2, 3, 4, 5]);
    expect(SHELL_HEADER_SIZE).toBe(5);
  });

  it('writes the length little-endian', () => {
    expect(encodeShellHeader(SHELL_STDOUT, 0x01020304)).toEqual(bytes(0x01, 0x04, 0x03, 0x02, 0x01));
    expect(encodeShellHeader(SHELL_STDERR, 0x100)).toEqual(bytes(0x02, 0x00, 0x01, 0x00, 0x00));
  });
});

describe('encoding (golden bytes)', () => {
  it('stdin, stdout and stderr packets', () => {
    expect(encodeShellPacket(SHELL_STDIN, Buffer.from('ls\n'))).toEqual(
      bytes(0x00, 0x03, 0x00, 0x00, 0x00, 0x6c, 0x73, 0x0a),
    );
    expect(encodeShellPacket(SHELL_STDOUT, Buffer.from('hi'))).toEqual(
      bytes(0x01, 0x02, 0x00, 0x00, 0x00, 0x68, 0x69),
    );
    expect(encodeShellPacket(SHELL_STDERR, Buffer.from('!'))).toEqual(
      bytes(0x02, 0x01, 0x00, 0x00, 0x00, 0x21),
    );
  });

  it('close-stdin carries no payload', () => {
    expect(encodeShellPacket(SHELL_CLOSE_STDIN)).toEqual(bytes(0x04, 0x00, 0x00, 0x00, 0x00));
  });

  it('exit carries one byte: the status modulo 256', () => {
    expect(encodeShellExit(0)).toEqual(bytes(0x03, 0x01, 0x00, 0x00, 0x00, 0x00));
    expect(encodeShellExit(1)).toEqual(bytes(0x03, 0x01, 0x00, 0x00, 0x00, 0x01));
    expect(encodeShellExit(255)).toEqual(bytes(0x03, 0x01, 0x00, 0x00, 0x00, 0xff));
    expect(encodeShellExit(256 + 7)).toEqual(bytes(0x03, 0x01, 0x00, 0x00, 0x00, 0x07));
  });

  it('window-size-change carries "rowsxcols,xpixelsxypixels" NUL-terminated', () => {
    const payload = Buffer.from('24x80,0x0\0', 'latin1');
    expect(encodeShellPacket(SHELL_WINDOW_SIZE, payload)).toEqual(
      Buffer.concat([bytes(0x05, 0x0a, 0x00, 0x00, 0x00), payload]),
    );
  });
});

describe('decoding (golden bytes)', () => {
  it('decodes a session as the device sends it: stdout, stderr, exit', () => {
    const wire = bytes(
      ...[0x01, 0x06, 0x00, 0x00, 0x00, ...Buffer.from('hello\n')],
      ...[0x02, 0x04, 0x00, 0x00, 0x00, ...Buffer.from('oops')],
      ...[0x03, 0x01, 0x00, 0x00, 0x00, 0x2a],
    );
    const packets = new ShellPacketDecoder().push(wire);
    expect(packets.map((p) => ({ id: p.id, data: p.data.toString('latin1') }))).toEqual([
      { id: 1, data: 'hello\n' },
      { id: 2, data: 'oops' },
      { id: 3, data: '*' },
    ]);
  });

  it('waits for a packet cut anywhere, header included', () => {
    const d = new ShellPacketDecoder();
    expect(d.push(bytes(0x01, 0x03, 0x00))).toEqual([]);
    expect(d.push(bytes(0x00, 0x00, 0x61))).toEqual([]);
    expect(d.buffered).toBe(6);
    const [p] = d.push(bytes(0x62, 0x63));
    expect(p?.id).toBe(1);
    expect(p?.data.toString()).toBe('abc');
    expect(d.buffered).toBe(0);
  });

  it('reads the length as little-endian (a big-endian reader would wait for 16 MiB)', () => {
    const d = new ShellPacketDecoder();
    const [p] = d.push(bytes(0x01, 0x01, 0x00, 0x00, 0x00, 0x41));
    expect(p?.data.toString()).toBe('A');
  });
});
