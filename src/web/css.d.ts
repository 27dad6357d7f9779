/** CSS files are bundled as text (esbuild `text` loader): the widget adopts them into its shadow root. */
declare module '*.css' {
  const css: string;
  export default css;
}
