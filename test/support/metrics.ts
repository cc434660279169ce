/** Reads one sample of a Prometheus text exposition; undefined when absent. */
export function metric(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const open = line.indexOf("{");
    const labelText = open >= 0 ? line.slice(open + 1, line.lastIndexOf("}")) : "";
    const found = Object.fromEntries([...labelText.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v))
      return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return undefined;
}
