// Types of third-party-notices.mjs (plain JavaScript, run by hand after dependencies change and by the packaging test).
export interface BundledPackage {
  name: string;
  version: string;
  licence: string;
  homepage: string;
  texts: { file: string; text: string }[];
}
export function collectPackages(): BundledPackage[];
export function render(packages: BundledPackage[]): string;
