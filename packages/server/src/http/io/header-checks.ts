// Response header names and values, checked before they reach uWS: a bad name is a bug in
// the app (TypeError), a value with CR/LF/NUL would split the response (refused).
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_HEADER_VALUE = /[\r\n\0]/;

// Apps use a handful of header names: validate and lower-case each once.
const checkedNames = new Map<string, string>();

export function checkHeaderName(name: string): string {
  let key = checkedNames.get(name);
  if (key !== undefined) return key;
  if (!HEADER_NAME.test(name)) throw new TypeError(`Invalid header name: ${JSON.stringify(name)}`);
  key = name.toLowerCase();
  if (checkedNames.size < 1024) checkedNames.set(name, key);
  return key;
}

export function checkHeaderValue(name: string, value: string): string {
  if (BAD_HEADER_VALUE.test(value)) throw new TypeError(`Header ${name} contains CR, LF or NUL: refused (response splitting)`);
  return value;
}
