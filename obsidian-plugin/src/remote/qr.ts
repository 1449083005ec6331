/**
 * The pairing link as a QR code (the `qrcode` package's encoder), drawn as one SVG path with DOM
 * calls: no markup strings. Scanned with a phone's camera, it opens
 * `obsidian://vault-rag-pair?url=…&code=…` in Obsidian, which pairs.
 */
import { create } from "qrcode";

const SVG = "http://www.w3.org/2000/svg";
/** Light modules around the code, as the standard asks. */
const QUIET = 4;

/** The dark modules as an SVG path in module units (one `h1v1h-1z` square each). */
export function qrPath(text: string): { size: number; path: string } {
  const { modules } = create(text, { errorCorrectionLevel: "M" });
  const parts: string[] = [];
  for (let y = 0; y < modules.size; y++) {
    for (let x = 0; x < modules.size; x++) if (modules.get(x, y)) parts.push(`M${x + QUIET} ${y + QUIET}h1v1h-1z`);
  }
  return { size: modules.size + 2 * QUIET, path: parts.join("") };
}

/** An `<svg>` of the QR code in `parent` (black on white, whatever the theme). */
export function renderQr(parent: HTMLElement, text: string, pixels = 220): SVGSVGElement {
  const { size, path } = qrPath(text);
  const doc = parent.ownerDocument;
  const svg = doc.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${size} ${size}`);
  svg.setAttribute("width", String(pixels));
  svg.setAttribute("height", String(pixels));
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "Pairing code to scan with the other device's camera");
  svg.setAttribute("shape-rendering", "crispEdges");
  svg.setAttribute("data-testid", "pair-qr");
  const background = doc.createElementNS(SVG, "rect");
  background.setAttribute("width", String(size));
  background.setAttribute("height", String(size));
  background.setAttribute("fill", "#fff");
  const dark = doc.createElementNS(SVG, "path");
  dark.setAttribute("d", path);
  dark.setAttribute("fill", "#000");
  svg.append(background, dark);
  parent.appendChild(svg);
  return svg;
}
