/**
 * http(s) URLs whose host is not a public IPv4 address or name, in every form
 * the URL parser reads as one (IPv6 and IPv4-mapped literals, hex, octal and
 * integer IPv4, percent-encoding, backslash tricks), each with a word its
 * refusal carries. The target rules refuse them all, and so do the settings
 * that name hosts ZAP connects to (a seed URL).
 */
export const NON_PUBLIC_URLS: ReadonlyArray<{ name: string; input: string; message: string }> = [
  { name: 'a URL with host [::1] is refused as IPv6', input: 'http://[::1]/', message: 'IPv6' },
  { name: 'a URL with host [::1] and a port is refused as IPv6', input: 'http://[::1]:8080/admin', message: 'IPv6' },
  { name: 'a URL with an IPv4-mapped IPv6 host is refused as IPv6', input: 'https://[::ffff:127.0.0.1]/', message: 'IPv6' },
  { name: 'a URL on loopback with a port and path is refused', input: 'http://127.0.0.1:8080/x', message: '127.0.0.0/8' },
  { name: 'a URL on a private address is refused', input: 'https://10.1.2.3', message: '10.0.0.0/8' },
  { name: 'a URL on the cloud metadata address is refused', input: 'http://169.254.169.254/latest/meta-data/', message: '169.254.0.0/16' },
  { name: 'a URL host 0x7f.1 that the URL parser reads as 127.0.0.1 is refused', input: 'http://0x7f.1/', message: '127.0.0.0/8' },
  { name: 'a URL host 2130706433 that the URL parser reads as 127.0.0.1 is refused', input: 'http://2130706433/', message: '127.0.0.0/8' },
  { name: 'a URL host 0177.0.0.1 (octal) that the URL parser reads as 127.0.0.1 is refused', input: 'http://0177.0.0.1/', message: '127.0.0.0/8' },
  { name: 'a percent-encoded URL host that decodes to 127.0.0.1 is refused', input: 'http://%31%32%37.0.0.1/', message: '127.0.0.0/8' },
  { name: 'a URL host 0 that the URL parser reads as 0.0.0.0 is refused', input: 'http://0/', message: '0.0.0.0/8' },
  { name: 'a URL whose host is localhost is refused', input: 'http://localhost:3000/', message: 'fully qualified' },
  { name: 'a URL under .internal is refused', input: 'https://metadata.google.internal/computeMetadata/v1/', message: '.internal' },
  { name: 'a URL whose backslash makes 127.0.0.1 the real host is refused', input: 'http://127.0.0.1\\@example.com/', message: '127.0.0.0/8' },
  { name: 'a URL host 2852039166, the integer form of 169.254.169.254, is refused', input: 'http://2852039166/latest/meta-data/', message: '169.254.0.0/16' },
  { name: 'a URL host 0xa9.0xfe.0xa9.0xfe (hex 169.254.169.254) is refused', input: 'http://0xa9.0xfe.0xa9.0xfe/', message: '169.254.0.0/16' },
  { name: 'a URL host 0251.0376.0251.0376 (octal 169.254.169.254) is refused', input: 'http://0251.0376.0251.0376/', message: '169.254.0.0/16' },
  { name: 'a URL host 0x7f000001 (hex 127.0.0.1) is refused', input: 'http://0x7f000001/', message: '127.0.0.0/8' },
  {
    name: 'a URL with the IPv4-mapped metadata address [::ffff:169.254.169.254] is refused as IPv6',
    input: 'http://[::ffff:169.254.169.254]/',
    message: 'IPv6',
  },
  { name: 'a URL with the unspecified IPv6 address [::] is refused as IPv6', input: 'http://[::]/', message: 'IPv6' },
  { name: 'a URL on 192.168.1.1 with a trailing dot is refused', input: 'http://192.168.1.1./', message: '192.168.0.0/16' },
];
