/**
 * The one way scanner XML is read (DESIGN.md decision 11): a streaming saxes
 * parser behind strict UTF-8 decoding, a byte cap, a nesting cap, a root
 * element check and a refusal of DOCTYPE internal subsets. Every problem
 * surfaces as a MalformedResultError whose message says what is wrong and
 * what the file was expected to be.
 */
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { MalformedResultError } from '../../domain/errors.js';

const DEFAULT_MAX_XML_BYTES = 25 * 1024 * 1024;
/** Scanner reports nest about 10 levels deep; 64 leaves room and stops nesting bombs early. */
const DEFAULT_MAX_XML_DEPTH = 64;

export interface XmlElement {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  /** 0 for the root element, 1 for its children, and so on. */
  readonly depth: number;
  /** The element this one is in; undefined for the root. */
  readonly parent: XmlElement | undefined;
  /**
   * Element names from the root down to and including this element. Built
   * when first asked for (and kept): handlers that go by name and depth make
   * no array per element (issue 17: the nmap handlers' path joins were a
   * third of the parse).
   */
  readonly path: readonly string[];
}

export interface XmlHandlers {
  open?(element: XmlElement): void;
  /**
   * `text` is the element's own character data (CDATA included), without its
   * children's text; '' for an element gathersText() declined.
   */
  close?(element: XmlElement, text: string): void;
  /**
   * Whether the element's text is wanted at its close, asked once as it opens
   * (after open()). Without it every element's text is gathered; with it the
   * text nobody reads (mostly the whitespace between elements) is dropped as
   * it is read instead of being joined up per element.
   */
  gathersText?(element: XmlElement): boolean;
}

export interface SafeXmlOptions {
  /** What the file should be, used in error messages: "an nmap XML report (nmap -oX)". */
  expected: string;
  /** Accepted names of the root element. */
  rootElements: readonly string[];
  maxBytes?: number;
  maxDepth?: number;
}

/** A push reader: bytes in any split, handlers called in document order. */
export interface SafeXmlReader {
  write(chunk: Uint8Array): void;
  /** Checks the document is complete; throws MalformedResultError when it is not. */
  end(): void;
}

export function createSafeXmlReader(options: SafeXmlOptions, handlers: XmlHandlers): SafeXmlReader {
  return new SafeXmlStream(options, handlers);
}

/** True when `path` ends with the given element names, e.g. pathEndsWith(path, 'results', 'result'). */
export function pathEndsWith(path: readonly string[], ...suffix: string[]): boolean {
  if (suffix.length > path.length) return false;
  const offset = path.length - suffix.length;
  return suffix.every((name, index) => path[offset + index] === name);
}

/** The part of `path` below the element at `depth` (0 = root), joined with '/': "nvt/refs/ref". */
export function relativePath(path: readonly string[], depth: number): string {
  return path.slice(depth + 1).join('/');
}

// saxes reports an XML declaration after a comment as an error. secureCodeBox's
// nmap files put a licence comment before `<?xml ...?>`; users upload such files,
// and the declaration carries nothing we rely on (we always decode UTF-8).
const LATE_XML_DECLARATION = 'an XML declaration must be at the start of the document.';

/** An element while it is open: its own text is gathered on it. */
class OpenElement implements XmlElement {
  text = '';
  gathers = true;
  private builtPath: string[] | undefined;

  constructor(
    readonly name: string,
    readonly attributes: Readonly<Record<string, string>>,
    readonly depth: number,
    readonly parent: OpenElement | undefined,
  ) {}

  get path(): readonly string[] {
    if (this.builtPath === undefined) this.builtPath = this.parent === undefined ? [this.name] : [...this.parent.path, this.name];
    return this.builtPath;
  }
}

class SafeXmlStream implements SafeXmlReader {
  /** The byte-order mark is dropped by hand (decodeChunk), as this decoder is also used outside its streaming mode. */
  private readonly decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  private decodedAny = false;
  private readonly parser = new SaxesParser<{ xmlns: false }>({ xmlns: false });
  private readonly maxBytes: number;
  private readonly maxDepth: number;
  private readonly stack: OpenElement[] = [];
  private bytesRead = 0;
  private sawMarkup = false;
  private sawRoot = false;
  private checkedFirstCharacter = false;
  private failure: unknown;

  constructor(
    private readonly options: SafeXmlOptions,
    private readonly handlers: XmlHandlers,
  ) {
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_XML_BYTES;
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_XML_DEPTH;
    this.listen();
  }

  write(chunk: Uint8Array): void {
    this.guard(() => {
      this.bytesRead += chunk.byteLength;
      if (this.bytesRead > this.maxBytes) {
        throw new MalformedResultError(`The file is larger than ${describeBytes(this.maxBytes)}, the limit for scanner results.`);
      }
      if (chunk.byteLength > 0) this.feed(this.decode(chunk, endsInsideCharacter(chunk)));
    });
  }

  end(): void {
    this.guard(() => {
      this.feed(this.decode(new Uint8Array(0), false));
      this.checkComplete();
      this.parser.close();
    });
  }

  /** Runs `step` unless an earlier step failed; a failure is kept so later calls repeat it. */
  private guard(step: () => void): void {
    if (this.failure !== undefined) throw this.failure;
    try {
      step();
    } catch (error) {
      this.failure = error;
      throw error;
    }
  }

  /**
   * Strict UTF-8. TextDecoder's streaming mode costs half as much again as
   * decoding a whole buffer (25 MB: ~30 ms against ~20), so it is used only
   * for a chunk that ends inside a character; any other chunk is decoded
   * whole (with the bytes a streamed chunk left pending before it). The
   * byte-order mark is dropped at the start of the text only, as the
   * streaming mode does.
   */
  private decode(chunk: Uint8Array, stream: boolean): string {
    try {
      const text = this.decoder.decode(chunk, { stream });
      if (this.decodedAny || text === '') return text;
      this.decodedAny = true;
      return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    } catch {
      throw new MalformedResultError(
        `The file is not valid UTF-8 text (near byte ${this.bytesRead}); expected ${this.options.expected}, which is UTF-8 encoded.`,
      );
    }
  }

  private feed(text: string): void {
    if (text === '') return;
    if (!this.checkedFirstCharacter) this.refuseNonXmlStart(text);
    this.parser.write(text);
  }

  /** Fails fast on JSON, CSV or binary files instead of after reading them whole. */
  private refuseNonXmlStart(text: string): void {
    const first = text.trimStart()[0];
    if (first === undefined) return;
    this.checkedFirstCharacter = true;
    if (first === '<') return;
    throw new MalformedResultError(`The file does not start with '<', so it is not XML; expected ${this.describeExpected()}.`);
  }

  /**
   * Six handlers, no more: saxes adds each handler as a new property, and with
   * eight of them V8 turns the parser into a slow dictionary object, which
   * made reading text about ten times slower.
   */
  private listen(): void {
    const parser = this.parser;
    parser.on('error', (error) => this.onSaxesError(error));
    parser.on('doctype', (doctype) => this.onDoctype(doctype));
    parser.on('opentag', (tag) => this.onOpenTag(tag));
    parser.on('closetag', () => this.onCloseTag());
    parser.on('text', (text) => this.onText(text));
    parser.on('cdata', (text) => this.onText(text));
  }

  private onSaxesError(error: Error): void {
    const reason = error.message.replace(/^\d+:\d+: /, '');
    if (reason === LATE_XML_DECLARATION && !this.sawMarkup) return;
    throw new MalformedResultError(
      `The file is not well-formed XML: ${reason.replace(/\.$/, '')} (${this.describePosition()}); expected ${this.describeExpected()}.`,
    );
  }

  /**
   * nmap writes `<!DOCTYPE nmaprun>` (older releases with a PUBLIC id), so a
   * DOCTYPE alone is accepted: saxes never fetches external DTDs. An internal
   * subset is where entity declarations live; no scanner writes one.
   */
  private onDoctype(doctype: string): void {
    this.sawMarkup = true;
    if (doctype.includes('[')) {
      throw new MalformedResultError(
        `The file declares a DOCTYPE with an internal subset (${this.describePosition()}); scanner reports never contain one, refusing it to avoid entity expansion.`,
      );
    }
  }

  private checkDepth(): void {
    if (this.stack.length >= this.maxDepth) {
      throw new MalformedResultError(
        `The file nests elements more than ${this.maxDepth} levels deep (${this.describePosition()}); scanner reports never do, refusing it.`,
      );
    }
  }

  private onOpenTag(tag: SaxesTagPlain): void {
    this.sawMarkup = true;
    this.checkDepth();
    const parent = this.stack[this.stack.length - 1];
    if (parent === undefined) this.checkRoot(tag.name);
    const element = new OpenElement(tag.name, tag.attributes, this.stack.length, parent);
    this.stack.push(element);
    const handlers = this.handlers;
    handlers.open?.(element);
    if (handlers.gathersText !== undefined) element.gathers = handlers.gathersText(element);
  }

  private onCloseTag(): void {
    const closed = this.stack.pop();
    if (closed !== undefined) this.handlers.close?.(closed, closed.text);
  }

  private onText(text: string): void {
    const current = this.stack[this.stack.length - 1];
    if (current !== undefined) {
      if (current.gathers) current.text += text;
    } else if (text.trim() !== '') this.sawMarkup = true;
  }

  private checkRoot(name: string): void {
    if (this.sawRoot) return; // a second root is reported by saxes itself
    this.sawRoot = true;
    if (this.options.rootElements.includes(name)) return;
    throw new MalformedResultError(`The file's root element is <${name}>, but ${this.options.expected} has the root element ${this.describeRoots()}.`);
  }

  private checkComplete(): void {
    if (this.bytesRead === 0) {
      throw new MalformedResultError(`The file is empty; expected ${this.describeExpected()}.`);
    }
    if (!this.sawRoot) {
      throw new MalformedResultError(`The file contains no XML element; expected ${this.describeExpected()}.`);
    }
    const innermost = this.stack[this.stack.length - 1];
    if (innermost !== undefined) {
      throw new MalformedResultError(
        `The file ends inside <${innermost.name}> at line ${this.parser.line}, before the root element is closed; it looks truncated.`,
      );
    }
  }

  private describePosition(): string {
    return `line ${this.parser.line}, column ${this.parser.column}`;
  }

  private describeExpected(): string {
    return `${this.options.expected} with the root element ${this.describeRoots()}`;
  }

  private describeRoots(): string {
    return this.options.rootElements.map((name) => `<${name}>`).join(' or ');
  }
}

/**
 * Whether the last character of `bytes` is cut off: a UTF-8 lead byte in the
 * last three bytes announcing more bytes than follow it. When unsure (bytes
 * that are not UTF-8 at all) it says yes, and the streaming decoder decides.
 */
export function endsInsideCharacter(bytes: Uint8Array): boolean {
  const length = bytes.length;
  for (let back = 1; back <= 3 && back <= length; back++) {
    const byte = bytes[length - back]!;
    if (byte < 0x80) return false;
    if (byte >= 0xc0) return (byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2) > back || byte >= 0xf8;
  }
  return length > 0;
}

function describeBytes(bytes: number): string {
  const mebibytes = bytes / (1024 * 1024);
  return Number.isInteger(mebibytes) ? `${mebibytes} MiB` : `${bytes} bytes`;
}
