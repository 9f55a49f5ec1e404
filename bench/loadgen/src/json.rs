//! Just enough JSON: a validating, allocation-free scanner used on the hot receive path
//! (find members of an object, items of an array, read integers and strings), and a small
//! value tree used to print the final report.

use std::borrow::Cow;
use std::fmt::Write as _;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError(pub &'static str, pub usize);

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid JSON: {} at byte {}", self.0, self.1)
    }
}

type R<T> = Result<T, JsonError>;

const MAX_DEPTH: usize = 128;

pub fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// `b[i]` must be the opening quote; returns the index after the closing quote.
fn skip_string(b: &[u8], i: usize) -> R<usize> {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'"' => return Ok(j + 1),
            b'\\' => {
                let c = *b.get(j + 1).ok_or(JsonError("unterminated escape", j))?;
                match c {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => j += 2,
                    b'u' => {
                        let h = b.get(j + 2..j + 6).ok_or(JsonError("short \\u escape", j))?;
                        if !h.iter().all(|x| x.is_ascii_hexdigit()) {
                            return Err(JsonError("bad \\u escape", j));
                        }
                        j += 6;
                    }
                    _ => return Err(JsonError("bad escape", j)),
                }
            }
            0..=0x1F => return Err(JsonError("control character in string", j)),
            _ => j += 1,
        }
    }
    Err(JsonError("unterminated string", i))
}

fn skip_number(b: &[u8], i: usize) -> R<usize> {
    let mut j = i;
    if b.get(j) == Some(&b'-') {
        j += 1;
    }
    let d0 = j;
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
    }
    if j == d0 || (b[d0] == b'0' && j - d0 > 1) {
        return Err(JsonError("bad number", i));
    }
    if b.get(j) == Some(&b'.') {
        j += 1;
        let f0 = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j == f0 {
            return Err(JsonError("bad fraction", i));
        }
    }
    if matches!(b.get(j), Some(b'e') | Some(b'E')) {
        j += 1;
        if matches!(b.get(j), Some(b'+') | Some(b'-')) {
            j += 1;
        }
        let e0 = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j == e0 {
            return Err(JsonError("bad exponent", i));
        }
    }
    Ok(j)
}

fn skip_value_depth(b: &[u8], i: usize, depth: usize) -> R<usize> {
    if depth > MAX_DEPTH {
        return Err(JsonError("nested too deeply", i));
    }
    let i = skip_ws(b, i);
    match b.get(i) {
        None => Err(JsonError("expected a value", i)),
        Some(b'"') => skip_string(b, i),
        Some(b'{') => {
            let mut j = skip_ws(b, i + 1);
            if b.get(j) == Some(&b'}') {
                return Ok(j + 1);
            }
            loop {
                if b.get(j) != Some(&b'"') {
                    return Err(JsonError("expected a key", j));
                }
                j = skip_ws(b, skip_string(b, j)?);
                if b.get(j) != Some(&b':') {
                    return Err(JsonError("expected ':'", j));
                }
                j = skip_ws(b, skip_value_depth(b, j + 1, depth + 1)?);
                match b.get(j) {
                    Some(b',') => j = skip_ws(b, j + 1),
                    Some(b'}') => return Ok(j + 1),
                    _ => return Err(JsonError("expected ',' or '}'", j)),
                }
            }
        }
        Some(b'[') => {
            let mut j = skip_ws(b, i + 1);
            if b.get(j) == Some(&b']') {
                return Ok(j + 1);
            }
            loop {
                j = skip_ws(b, skip_value_depth(b, j, depth + 1)?);
                match b.get(j) {
                    Some(b',') => j += 1,
                    Some(b']') => return Ok(j + 1),
                    _ => return Err(JsonError("expected ',' or ']'", j)),
                }
            }
        }
        Some(b't') if b[i..].starts_with(b"true") => Ok(i + 4),
        Some(b'f') if b[i..].starts_with(b"false") => Ok(i + 5),
        Some(b'n') if b[i..].starts_with(b"null") => Ok(i + 4),
        Some(b'-' | b'0'..=b'9') => skip_number(b, i),
        Some(_) => Err(JsonError("unexpected character", i)),
    }
}

/// Skip the value starting at `i` (after optional whitespace); returns the index after it.
pub fn skip_value(b: &[u8], i: usize) -> R<usize> {
    skip_value_depth(b, i, 0)
}

/// Check that `b` is exactly one JSON value (with optional surrounding whitespace).
pub fn validate(b: &[u8]) -> R<()> {
    let end = skip_ws(b, skip_value(b, 0)?);
    if end != b.len() {
        return Err(JsonError("trailing characters", end));
    }
    Ok(())
}

/// Trim the whitespace around a value slice.
fn trim(b: &[u8]) -> &[u8] {
    let s = skip_ws(b, 0);
    let mut e = b.len();
    while e > s && matches!(b[e - 1], b' ' | b'\t' | b'\n' | b'\r') {
        e -= 1;
    }
    &b[s..e]
}

/// Call `f(raw_key, value)` for each member of the object `b` (whitespace allowed around it).
/// `raw_key` is the key between its quotes, still escaped (compare it with [`key_is`]).
/// `f` returns false to stop early. Fails if `b` is not an object.
pub fn for_each_member<'a>(b: &'a [u8], mut f: impl FnMut(&'a [u8], &'a [u8]) -> bool) -> R<()> {
    let i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return Err(JsonError("expected an object", i));
    }
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b'}') {
        return Ok(());
    }
    loop {
        if b.get(j) != Some(&b'"') {
            return Err(JsonError("expected a key", j));
        }
        let kend = skip_string(b, j)?;
        let key = &b[j + 1..kend - 1];
        j = skip_ws(b, kend);
        if b.get(j) != Some(&b':') {
            return Err(JsonError("expected ':'", j));
        }
        let vstart = skip_ws(b, j + 1);
        let vend = skip_value_depth(b, vstart, 1)?;
        if !f(key, &b[vstart..vend]) {
            return Ok(());
        }
        j = skip_ws(b, vend);
        match b.get(j) {
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b'}') => return Ok(()),
            _ => return Err(JsonError("expected ',' or '}'", j)),
        }
    }
}

/// Compare an escaped raw key with `want` (fast when the key has no escapes).
pub fn key_is(raw: &[u8], want: &str) -> bool {
    if !raw.contains(&b'\\') {
        return raw == want.as_bytes();
    }
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    matches!(as_str(&quoted), Some(s) if s == want)
}

/// The value of member `key` in object `b`.
pub fn get<'a>(b: &'a [u8], key: &str) -> R<Option<&'a [u8]>> {
    let mut found = None;
    for_each_member(b, |k, v| {
        if key_is(k, key) {
            found = Some(v);
            false
        } else {
            true
        }
    })?;
    Ok(found)
}

/// The decimal number at the start of `b` (no sign, no leading zero) and the bytes after it.
pub fn leading_u64(b: &[u8]) -> Option<(u64, &[u8])> {
    let len = b.iter().position(|c| !c.is_ascii_digit()).unwrap_or(b.len());
    if len == 0 || (len > 1 && b[0] == b'0') {
        return None;
    }
    let mut n: u64 = 0;
    for &c in &b[..len] {
        n = n.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some((n, &b[len..]))
}

/// The items of the array `b` (each a value slice).
pub fn array_items(b: &[u8]) -> R<Vec<&[u8]>> {
    let i = skip_ws(b, 0);
    if b.get(i) != Some(&b'[') {
        return Err(JsonError("expected an array", i));
    }
    let mut items = Vec::new();
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b']') {
        return Ok(items);
    }
    loop {
        let vstart = skip_ws(b, j);
        let vend = skip_value_depth(b, vstart, 1)?;
        items.push(&b[vstart..vend]);
        j = skip_ws(b, vend);
        match b.get(j) {
            Some(b',') => j += 1,
            Some(b']') => return Ok(items),
            _ => return Err(JsonError("expected ',' or ']'", j)),
        }
    }
}

/// The items of an array, one at a time, without collecting them (a batch frame's events on the
/// play loop's path): `Some(Err(_))` once at the first malformed spot, then `None`.
pub struct Items<'a> {
    b: &'a [u8],
    /// Where the next item (or the closing bracket) starts; `usize::MAX` when done.
    at: usize,
    first: bool,
}

pub fn items(b: &[u8]) -> R<Items<'_>> {
    let i = skip_ws(b, 0);
    if b.get(i) != Some(&b'[') {
        return Err(JsonError("expected an array", i));
    }
    Ok(Items { b, at: skip_ws(b, i + 1), first: true })
}

/// The items of the array `b` from the item that starts at byte `at` (a caller that read the
/// items before it another way).
pub fn items_from(b: &[u8], at: usize) -> Items<'_> {
    Items { b, at: skip_ws(b, at), first: true }
}

impl<'a> Iterator for Items<'a> {
    type Item = R<&'a [u8]>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.at == usize::MAX {
            return None;
        }
        let b = self.b;
        let mut j = self.at;
        match b.get(j) {
            Some(b']') => {
                self.at = usize::MAX;
                return None;
            }
            Some(b',') if !self.first => j = skip_ws(b, j + 1),
            _ if self.first => {}
            _ => {
                self.at = usize::MAX;
                return Some(Err(JsonError("expected ',' or ']'", j)));
            }
        }
        self.first = false;
        match skip_value_depth(b, j, 1) {
            Ok(end) => {
                self.at = skip_ws(b, end);
                Some(Ok(&b[j..end]))
            }
            Err(e) => {
                self.at = usize::MAX;
                Some(Err(e))
            }
        }
    }
}

/// A non-negative integer value (no fraction or exponent).
pub fn as_u64(v: &[u8]) -> Option<u64> {
    let v = trim(v);
    if v.is_empty() || v.len() > 20 || !v.iter().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut n: u64 = 0;
    for c in v {
        n = n.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some(n)
}

fn hex4(h: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(h.get(..4)?).ok()?;
    u32::from_str_radix(s, 16).ok()
}

/// A string value, unescaped (borrowed when it has no escapes).
pub fn as_str(v: &[u8]) -> Option<Cow<'_, str>> {
    let v = trim(v);
    if v.len() < 2 || v[0] != b'"' || skip_string(v, 0).ok()? != v.len() {
        return None;
    }
    let inner = &v[1..v.len() - 1];
    if !inner.contains(&b'\\') {
        return std::str::from_utf8(inner).ok().map(Cow::Borrowed);
    }
    let mut out = String::with_capacity(inner.len());
    let mut i = 0;
    let mut run = 0; // start of the current run of unescaped bytes
    while i < inner.len() {
        if inner[i] != b'\\' {
            i += 1;
            continue;
        }
        out.push_str(std::str::from_utf8(&inner[run..i]).ok()?);
        let c = inner[i + 1];
        i += 2;
        match c {
            b'"' => out.push('"'),
            b'\\' => out.push('\\'),
            b'/' => out.push('/'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            _ => {
                // b'u' (skip_string already checked the escapes)
                let hi = hex4(&inner[i..])?;
                i += 4;
                let cp = if (0xD800..0xDC00).contains(&hi) {
                    if inner.get(i..i + 2) != Some(b"\\u") {
                        return None;
                    }
                    let lo = hex4(&inner[i + 2..])?;
                    if !(0xDC00..0xE000).contains(&lo) {
                        return None;
                    }
                    i += 6;
                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                } else {
                    hi
                };
                out.push(char::from_u32(cp)?);
            }
        }
        run = i;
    }
    out.push_str(std::str::from_utf8(&inner[run..]).ok()?);
    Some(Cow::Owned(out))
}

/// Append `s` as a JSON string literal.
pub fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A JSON value tree for the report (keys keep their insertion order).
#[derive(Debug, Clone, PartialEq)]
pub enum J {
    Null,
    Bool(bool),
    Int(i64),
    Num(f64),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl J {
    pub fn obj() -> J {
        J::Obj(Vec::new())
    }

    /// A float rounded to `decimals` places (non-finite values become null).
    pub fn num(x: f64, decimals: i32) -> J {
        if !x.is_finite() {
            return J::Null;
        }
        let m = 10f64.powi(decimals);
        J::Num((x * m).round() / m)
    }

    /// Builder: add a member (only on objects).
    pub fn set(mut self, key: &str, v: impl Into<J>) -> J {
        self.insert(key, v);
        self
    }

    pub fn insert(&mut self, key: &str, v: impl Into<J>) {
        if let J::Obj(m) = self {
            let v = v.into();
            if let Some(e) = m.iter_mut().find(|(k, _)| k == key) {
                e.1 = v;
            } else {
                m.push((key.to_string(), v));
            }
        }
    }

    pub fn get(&self, key: &str) -> Option<&J> {
        match self {
            J::Obj(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            J::Int(i) => Some(*i as f64),
            J::Num(x) => Some(*x),
            _ => None,
        }
    }

    pub fn write(&self, out: &mut String) {
        match self {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Int(i) => {
                let _ = write!(out, "{i}");
            }
            J::Num(x) => {
                if x.fract() == 0.0 && x.abs() < 1e15 {
                    let _ = write!(out, "{}", *x as i64);
                } else {
                    let _ = write!(out, "{x}");
                }
            }
            J::Str(s) => write_str(out, s),
            J::Arr(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write(out);
                }
                out.push(']');
            }
            J::Obj(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_str(out, k);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

impl std::fmt::Display for J {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = String::new();
        self.write(&mut s);
        f.write_str(&s)
    }
}

impl From<bool> for J {
    fn from(b: bool) -> J {
        J::Bool(b)
    }
}
impl From<u64> for J {
    fn from(v: u64) -> J {
        J::Int(v as i64)
    }
}
impl From<i64> for J {
    fn from(v: i64) -> J {
        J::Int(v)
    }
}
impl From<usize> for J {
    fn from(v: usize) -> J {
        J::Int(v as i64)
    }
}
impl From<u32> for J {
    fn from(v: u32) -> J {
        J::Int(v as i64)
    }
}
impl From<f64> for J {
    fn from(v: f64) -> J {
        J::num(v, 3)
    }
}
impl From<&str> for J {
    fn from(v: &str) -> J {
        J::Str(v.to_string())
    }
}
impl From<String> for J {
    fn from(v: String) -> J {
        J::Str(v)
    }
}
impl<T: Into<J>> From<Option<T>> for J {
    fn from(v: Option<T>) -> J {
        v.map_or(J::Null, Into::into)
    }
}
impl From<Vec<J>> for J {
    fn from(v: Vec<J>) -> J {
        J::Arr(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_one_at_a_time() {
        for ok in [&b"[]"[..], b" [ ] ", b"[1]", br#"[{"a":[1,2]}, "x,]" ,3]"#] {
            let got: Vec<&[u8]> = items(ok).unwrap().map(|r| r.unwrap()).collect();
            assert_eq!(got, array_items(ok).unwrap(), "{}", String::from_utf8_lossy(ok));
        }
        for bad in [&b"[1,]"[..], b"[1", b"[1 2]", b"[,1]", b"[{]"] {
            assert!(items(bad).unwrap().any(|r| r.is_err()), "{}", String::from_utf8_lossy(bad));
            assert!(array_items(bad).is_err());
        }
        assert!(items(b"{}").is_err());
    }

    #[test]
    fn scan_nested_and_escaped() {
        let doc = br#" { "a" : [1, -2.5e3, {"x": "y\"}"}], "b\u0022": "q\\\"", "c": null, "d": true, "n": 12345678901234567 } "#;
        validate(doc).unwrap();
        assert_eq!(get(doc, "a").unwrap(), Some(&br#"[1, -2.5e3, {"x": "y\"}"}]"#[..]));
        assert_eq!(get(doc, "b\"").unwrap(), Some(&br#""q\\\"""#[..]));
        assert_eq!(as_str(get(doc, "b\"").unwrap().unwrap()).unwrap(), "q\\\"");
        assert_eq!(get(doc, "c").unwrap(), Some(&b"null"[..]));
        assert_eq!(get(doc, "missing").unwrap(), None);
        assert_eq!(as_u64(get(doc, "n").unwrap().unwrap()), Some(12345678901234567));
        let items = array_items(get(doc, "a").unwrap().unwrap()).unwrap();
        assert_eq!(items.len(), 3);
        assert_eq!(as_u64(items[1]), None);
        assert_eq!(as_str(get(items[2], "x").unwrap().unwrap()).unwrap(), "y\"}");
    }

    #[test]
    fn unicode_escapes() {
        assert_eq!(as_str(br#""a\u00e9\ud83d\ude00\n\/""#).unwrap(), "a\u{e9}\u{1F600}\n/");
        assert_eq!(as_str(br#""\ud83d""#), None);
        assert_eq!(as_str("\"d\u{e9}j\u{e0}\"".as_bytes()).unwrap(), "d\u{e9}j\u{e0}");
    }

    #[test]
    fn rejects_bad_json() {
        for bad in [&br#"{"a":}"#[..], br#"{"a" 1}"#, br#"[1,]"#, br#""abc"#, br#"{"a":01}"#, b"tru", br#""\x""#, b"{} x", b"-", b"1.", b"1e"] {
            assert!(validate(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(validate(deep.as_bytes()).is_err());
        assert!(for_each_member(b"[1]", |_, _| true).is_err());
        assert!(array_items(b"{}").is_err());
    }

    #[test]
    fn report_writer() {
        let j = J::obj()
            .set("ok", false)
            .set("reason", "fan-out \"ratio\"\n")
            .set("rate", 1234.5678)
            .set("n", 3u64)
            .set("none", None::<u64>)
            .set("arr", vec![J::Int(1), J::num(f64::NAN, 1)]);
        let s = j.to_string();
        assert_eq!(s, r#"{"ok":false,"reason":"fan-out \"ratio\"\n","rate":1234.568,"n":3,"none":null,"arr":[1,null]}"#);
        validate(s.as_bytes()).unwrap();
        assert_eq!(j.get("n"), Some(&J::Int(3)));
    }
}
