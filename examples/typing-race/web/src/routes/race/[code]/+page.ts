// The race lives in the browser (a WebSocket); the server renders only the frame.
export const ssr = false;
