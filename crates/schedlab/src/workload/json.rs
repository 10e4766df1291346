//! The JSON that rt-app accepts: json-c's non-strict tokener (comments, trailing commas,
//! single-quoted strings) with object keys kept in file order and duplicates kept, each value
//! carrying its line and column. The rt-app layer decides what duplicates mean.

use crate::limits::MAX_JSON_DEPTH;

/// A parsed value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Array(Vec<Node>),
    /// Entries in file order, duplicates included.
    Object(Vec<(String, Node)>),
    /// A key written with no value (`"suspend",`), which only workgen accepts.
    Missing,
}

/// A value and where it starts in the file (1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    pub line: u32,
    pub col: u32,
}

impl Value {
    /// The JSON type name, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number with a fraction",
            Value::Str(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
            Value::Missing => "nothing",
        }
    }
}

/// A syntax error and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    pub line: u32,
    pub col: u32,
    pub message: String,
}

/// Parse a whole document. `bare_keys` accepts keys without a value (workgen's `"suspend",`).
pub fn parse(text: &str, bare_keys: bool) -> Result<Node, SyntaxError> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        line: 1,
        col: 1,
        bare_keys,
        depth: 0,
    };
    p.skip_space()?;
    let node = p.value()?;
    p.skip_space()?;
    if p.i < p.s.len() {
        return Err(p.error("unexpected text after the document"));
    }
    Ok(node)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    line: u32,
    col: u32,
    bare_keys: bool,
    /// Objects and arrays open around the current position.
    depth: usize,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            line: self.line,
            col: self.col,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn bump(&mut self) {
        if self.s[self.i] == b'\n' {
            self.line += 1;
            self.col = 1;
        } else if self.s[self.i] & 0xC0 != 0x80 {
            self.col += 1; // count characters, not UTF-8 continuation bytes
        }
        self.i += 1;
    }

    /// Whitespace and both comment styles.
    fn skip_space(&mut self) -> Result<(), SyntaxError> {
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' | b'\r' | b'\n' => self.bump(),
                b'/' if self.s.get(self.i + 1) == Some(&b'/') => {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.bump();
                    }
                }
                b'/' if self.s.get(self.i + 1) == Some(&b'*') => {
                    let start = self.error("unterminated /* comment");
                    self.bump();
                    self.bump();
                    loop {
                        match self.peek() {
                            None => return Err(start),
                            Some(b'*') if self.s.get(self.i + 1) == Some(&b'/') => {
                                self.bump();
                                self.bump();
                                break;
                            }
                            Some(_) => self.bump(),
                        }
                    }
                }
                _ => break,
            }
        }
        Ok(())
    }

    fn value(&mut self) -> Result<Node, SyntaxError> {
        let (line, col) = (self.line, self.col);
        let value = match self.peek() {
            None => return Err(self.error("unexpected end of file: a value is missing")),
            Some(b'{' | b'[') if self.depth == MAX_JSON_DEPTH => {
                return Err(self.error(format!(
                    "objects and arrays nested more than {MAX_JSON_DEPTH} deep (json-c's limit)"
                )))
            }
            Some(b'{') => self.nested(Self::object)?,
            Some(b'[') => self.nested(Self::array)?,
            Some(b'"' | b'\'') => Value::Str(self.string()?),
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(c) if c.is_ascii_alphabetic() => self.literal()?,
            Some(c) => return Err(self.error(format!("unexpected character {:?}", c as char))),
        };
        Ok(Node { value, line, col })
    }

    fn nested(
        &mut self,
        parse: fn(&mut Self) -> Result<Value, SyntaxError>,
    ) -> Result<Value, SyntaxError> {
        self.depth += 1;
        let value = parse(self);
        self.depth -= 1;
        value
    }

    fn object(&mut self) -> Result<Value, SyntaxError> {
        self.bump();
        let mut entries = Vec::new();
        loop {
            self.skip_space()?;
            match self.peek() {
                Some(b'}') => {
                    self.bump();
                    return Ok(Value::Object(entries));
                }
                Some(b'"' | b'\'') => {}
                _ => return Err(self.error("expected a quoted key or '}'")),
            }
            let key = self.string()?;
            self.skip_space()?;
            let node = match self.peek() {
                Some(b':') => {
                    self.bump();
                    self.skip_space()?;
                    self.value()?
                }
                Some(b',' | b'}') if self.bare_keys => Node {
                    value: Value::Missing,
                    line: self.line,
                    col: self.col,
                },
                _ => return Err(self.error(format!("expected ':' after the key {key:?}"))),
            };
            entries.push((key, node));
            self.skip_space()?;
            match self.peek() {
                Some(b',') => self.bump(),
                Some(b'}') => {}
                _ => return Err(self.error("expected ',' or '}' in an object")),
            }
        }
    }

    fn array(&mut self) -> Result<Value, SyntaxError> {
        self.bump();
        let mut items = Vec::new();
        loop {
            self.skip_space()?;
            if self.peek() == Some(b']') {
                self.bump();
                return Ok(Value::Array(items));
            }
            items.push(self.value()?);
            self.skip_space()?;
            match self.peek() {
                Some(b',') => self.bump(),
                Some(b']') => {}
                _ => return Err(self.error("expected ',' or ']' in an array")),
            }
        }
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        let quote = self.s[self.i];
        let start = self.error("unterminated string");
        self.bump();
        let mut out = Vec::new();
        loop {
            match self.peek() {
                None => return Err(start),
                Some(c) if c == quote => {
                    self.bump();
                    return String::from_utf8(out).map_err(|_| self.error("a string is not UTF-8"));
                }
                Some(b'\\') => {
                    self.bump();
                    let c = self.peek().ok_or(start.clone())?;
                    self.bump();
                    match c {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        // \' too: a single-quoted string (json-c's leniency) needs it.
                        b'"' | b'\'' | b'\\' | b'/' => out.push(c),
                        b'u' => {
                            let code = self.unicode_escape()?;
                            out.extend_from_slice(code.encode_utf8(&mut [0; 4]).as_bytes());
                        }
                        other => {
                            return Err(self.error(format!(
                                "invalid escape \\{} in a string (json-c accepts \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)",
                                other as char
                            )))
                        }
                    }
                }
                Some(c) if c < 0x20 => {
                    return Err(self.error(format!(
                        "control character 0x{c:02x} in a string: write it as an escape"
                    )))
                }
                Some(c) => {
                    out.push(c);
                    self.bump();
                }
            }
        }
    }

    /// The code point of `\uXXXX` (the `\u` read), a UTF-16 surrogate pair included.
    fn unicode_escape(&mut self) -> Result<char, SyntaxError> {
        let high = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&high) {
            if self.peek() != Some(b'\\') || self.s.get(self.i + 1) != Some(&b'u') {
                return Err(self.error("a \\u high surrogate not followed by a low one"));
            }
            self.bump();
            self.bump();
            let low = self.hex4()?;
            if !(0xDC00..0xE000).contains(&low) {
                return Err(self.error("a \\u high surrogate not followed by a low one"));
            }
            0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
        } else {
            high
        };
        char::from_u32(code).ok_or_else(|| self.error("a lone \\u low surrogate"))
    }

    /// Four hex digits.
    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let mut code = 0;
        for _ in 0..4 {
            let digit = self
                .peek()
                .and_then(|c| (c as char).to_digit(16))
                .ok_or_else(|| self.error("a \\u escape needs four hex digits"))?;
            code = code * 16 + digit;
            self.bump();
        }
        Ok(code)
    }

    fn number(&mut self) -> Result<Value, SyntaxError> {
        let start = self.i;
        let err = self.error("bad number");
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E'))
        {
            self.bump();
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).map_err(|_| err.clone())?;
        if text.contains(['.', 'e', 'E']) {
            return text.parse().map(Value::Float).map_err(|_| err);
        }
        match text.parse::<i64>() {
            Ok(n) => Ok(Value::Int(n)),
            // json-c saturates integers that do not fit in 64 bits
            Err(_) if text.len() > 1 && text.bytes().skip(1).all(|c| c.is_ascii_digit()) => {
                Ok(Value::Int(if text.starts_with('-') {
                    i64::MIN
                } else {
                    i64::MAX
                }))
            }
            Err(_) => Err(err),
        }
    }

    fn literal(&mut self) -> Result<Value, SyntaxError> {
        let start = self.i;
        let err =
            self.error("expected a value (a string, number, object, array, true, false or null)");
        while self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
            self.bump();
        }
        match &self.s[start..self.i] {
            b"true" => Ok(Value::Bool(true)),
            b"false" => Ok(Value::Bool(false)),
            b"null" => Ok(Value::Null),
            _ => Err(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(n: &Node) -> &[(String, Node)] {
        match &n.value {
            Value::Object(e) => e,
            v => panic!("not an object: {v:?}"),
        }
    }

    #[test]
    fn json_c_leniency() {
        let text = "{ // a comment\n 'a': 1, /* another */ \"b\": [1, 2,], \"a\": -3, }";
        let doc = parse(text, false).unwrap();
        let e = obj(&doc);
        assert_eq!(e.len(), 3, "duplicates are kept for the rt-app layer");
        assert_eq!(e[0].0, "a");
        assert_eq!(e[2].1.value, Value::Int(-3));
        assert_eq!((e[1].1.line, e[1].1.col), (2, 29));
        assert_eq!(
            e[1].1.value,
            Value::Array(vec![
                Node {
                    value: Value::Int(1),
                    line: 2,
                    col: 30
                },
                Node {
                    value: Value::Int(2),
                    line: 2,
                    col: 33
                },
            ])
        );
    }

    #[test]
    fn bare_keys_only_in_workgen_mode() {
        assert!(parse("{\"suspend\", \"run\": 1}", false).is_err());
        let doc = parse("{\"suspend\", \"run\": 1}", true).unwrap();
        assert_eq!(obj(&doc)[0].1.value, Value::Missing);
    }

    #[test]
    fn errors_say_where() {
        let e = parse("{\n  \"a\": 1\n  \"b\": 2\n}", false).unwrap_err();
        assert_eq!((e.line, e.col), (3, 3));
        assert!(e.message.contains("expected ',' or '}'"));
        let e = parse("{\"a\": tru}", false).unwrap_err();
        assert_eq!((e.line, e.col), (1, 7));
        assert!(parse("{\"a\": \"x}", false)
            .unwrap_err()
            .message
            .contains("unterminated"));
        assert!(parse("/* open", false)
            .unwrap_err()
            .message
            .contains("unterminated"));
        assert!(parse("{} x", false)
            .unwrap_err()
            .message
            .contains("after the document"));
    }

    #[test]
    fn strict_where_json_c_is() {
        let err = |text: &str| parse(text, false).unwrap_err().message;
        assert!(err(r#"{"a": "\q"}"#).contains("invalid escape \\q"));
        assert!(err("{\"a\": \"tab\there\"}").contains("control character 0x09"));
        assert!(err(r#"{"a": NaN}"#).contains("expected a value"));
        assert!(err(r#"{"a": Infinity}"#).contains("expected a value"));
        assert!(err(r#"{"a": -Infinity}"#).contains("bad number"));
        assert!(err(r#"{"a": -}"#).contains("bad number"));
        assert!(err(r#"{"a": "\ud83d"}"#).contains("surrogate"));
        assert!(err(r#"{"a": "\u12"}"#).contains("four hex digits"));
        let ok = |text: &str| parse(text, false).unwrap().value;
        assert_eq!(
            ok(r#""\u00e9\ud83d\ude00\/\"""#),
            Value::Str("é😀/\"".into())
        );
        assert_eq!(ok(r"'it\'s'"), Value::Str("it's".into()));
    }

    #[test]
    fn nesting_is_bounded_by_json_c_s_depth() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(parse(&nested(MAX_JSON_DEPTH), false).is_ok());
        let e = parse(&nested(MAX_JSON_DEPTH + 1), false).unwrap_err();
        assert_eq!((e.line, e.col), (1, MAX_JSON_DEPTH as u32 + 1));
        assert!(e.message.contains("nested more than 32"), "{}", e.message);
        // Far deeper input fails the same way, without exhausting the stack.
        assert!(parse(&nested(40_000), false).is_err());
    }

    #[test]
    fn numbers() {
        assert_eq!(parse("1.5", false).unwrap().value, Value::Float(1.5));
        assert_eq!(parse("-1", false).unwrap().value, Value::Int(-1));
        assert_eq!(
            parse("99999999999999999999", false).unwrap().value,
            Value::Int(i64::MAX)
        );
    }
}
