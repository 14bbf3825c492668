/** The dashboard's icon: a shield, drawn inline so that no external asset is fetched. */
export const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<path d="M16 2 4 6.5v8.2c0 7.4 5.1 13.3 12 15.3 6.9-2 12-7.9 12-15.3V6.5L16 2Z" fill="#3b82f6"/>
<path d="M16 5.2 7 8.6v6.1c0 5.8 3.8 10.5 9 12.2V5.2Z" fill="#1f5fbf"/>
<path d="m11.5 16.2 3.2 3.2 6.3-6.9" fill="none" stroke="#fff" stroke-width="2.6" stroke-linecap="round" stroke-linejoin="round"/>
</svg>
`;
