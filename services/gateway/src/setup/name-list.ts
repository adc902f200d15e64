/** Names for a message (`a, b, c`): at most 20, then how many more; `none` for none. */
export function nameList(names: readonly string[]): string {
  if (names.length === 0) return 'none';
  const shown = names.slice(0, 20).join(', ');
  return names.length > 20 ? `${shown}, … ${names.length - 20} more` : shown;
}
