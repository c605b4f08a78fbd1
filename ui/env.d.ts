// Styles are bundled as text (esbuild's `text` loader, scripts/bundle-ui.ts) and injected by main.tsx.
declare module '*.css' {
  const text: string
  export default text
}
