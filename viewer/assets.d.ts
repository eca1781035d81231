/** Style sheets imported by the viewer's modules: esbuild bundles them into app.css. */
declare module '*.css';
