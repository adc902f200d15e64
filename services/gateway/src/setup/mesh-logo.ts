/** The name the documentation shows for this mesh. */
export const MESH_NAME = 'agentmesh';

/** The Swagger UI top bar's logo: the mesh's name, as an SVG (instead of the framework's logo). */
export function meshLogo(): { type: string; content: Buffer; href: string; target: '_self' } {
  const svg =
    '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40" viewBox="0 0 200 40">' +
    `<title>${MESH_NAME}</title>` +
    '<text x="0" y="29" font-family="sans-serif" font-size="26" font-weight="700" fill="#ffffff">' +
    `${MESH_NAME}</text></svg>`;
  return { type: 'image/svg+xml', content: Buffer.from(svg), href: '/docs', target: '_self' };
}
