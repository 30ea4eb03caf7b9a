//! A RESP3 value tree: parsed from bytes and written back in the client's protocol.
//! Used for data Goblin ships in RESP form (the command metadata of COMMAND INFO / DOCS).

use super::reply::ReplyWriter;

/// One RESP3 value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `+text`
    Simple(String),
    /// `-text`
    Error(String),
    /// `:n`
    Int(i64),
    /// `$n` bytes
    Bulk(Vec<u8>),
    /// `,x`
    Double(f64),
    /// `_`
    Null,
    /// `#t` / `#f`
    Bool(bool),
    /// `*n`
    Array(Vec<Value>),
    /// `~n`
    Set(Vec<Value>),
    /// `%n`: key/value pairs in order.
    Map(Vec<(Value, Value)>),
}

/// A parse failure: the byte offset where the input stopped making sense.
#[derive(Debug, PartialEq, Eq)]
pub struct BadResp(pub usize);

impl Value {
    /// Parses one value at the start of `input`; returns it and the bytes used.
    pub fn parse(input: &[u8]) -> Result<(Value, usize), BadResp> {
        let mut pos = 0;
        let v = parse_at(input, &mut pos)?;
        Ok((v, pos))
    }

    /// Writes the value, lowering RESP3 types for RESP2 clients.
    pub fn write(&self, out: &mut ReplyWriter) {
        match self {
            Value::Simple(s) => out.simple(s),
            Value::Error(s) => out.error(s),
            Value::Int(n) => out.int(*n),
            Value::Bulk(b) => out.bulk(b),
            Value::Double(d) => out.double(*d),
            Value::Null => out.null(),
            Value::Bool(b) => out.boolean(*b),
            Value::Array(items) => {
                out.array(items.len());
                items.iter().for_each(|v| v.write(out));
            }
            Value::Set(items) => {
                out.set(items.len());
                items.iter().for_each(|v| v.write(out));
            }
            Value::Map(pairs) => {
                out.map(pairs.len());
                for (k, v) in pairs {
                    k.write(out);
                    v.write(out);
                }
            }
        }
    }

    /// The text of a bulk or simple string.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bulk(b) => Some(b),
            Value::Simple(s) => Some(s.as_bytes()),
            _ => None,
        }
    }

    /// The value under `key` in a map.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(pairs) => pairs
                .iter()
                .find(|(k, _)| k.as_bytes() == Some(key.as_bytes()))
                .map(|(_, v)| v),
            _ => None,
        }
    }
}

fn line<'a>(input: &'a [u8], pos: &mut usize) -> Result<&'a str, BadResp> {
    let start = *pos;
    let rest = input.get(start..).ok_or(BadResp(start))?;
    let end = rest
        .windows(2)
        .position(|w| w == b"\r\n")
        .ok_or(BadResp(start))?;
    *pos = start + end + 2;
    std::str::from_utf8(&rest[..end]).map_err(|_| BadResp(start))
}

fn count(input: &[u8], pos: &mut usize) -> Result<usize, BadResp> {
    let at = *pos;
    line(input, pos)?.parse().map_err(|_| BadResp(at))
}

fn parse_at(input: &[u8], pos: &mut usize) -> Result<Value, BadResp> {
    let at = *pos;
    let tag = *input.get(at).ok_or(BadResp(at))?;
    *pos += 1;
    Ok(match tag {
        b'+' => Value::Simple(line(input, pos)?.to_owned()),
        b'-' => Value::Error(line(input, pos)?.to_owned()),
        b':' => Value::Int(line(input, pos)?.parse().map_err(|_| BadResp(at))?),
        b',' => Value::Double(
            crate::numbers::parse_f64(line(input, pos)?.as_bytes()).ok_or(BadResp(at))?,
        ),
        b'_' => {
            line(input, pos)?;
            Value::Null
        }
        b'#' => Value::Bool(line(input, pos)? == "t"),
        b'$' => {
            let n = count(input, pos)?;
            let bytes = input.get(*pos..*pos + n).ok_or(BadResp(*pos))?.to_vec();
            *pos += n + 2;
            Value::Bulk(bytes)
        }
        b'*' | b'~' => {
            let n = count(input, pos)?;
            let items = (0..n)
                .map(|_| parse_at(input, pos))
                .collect::<Result<Vec<_>, _>>()?;
            if tag == b'*' {
                Value::Array(items)
            } else {
                Value::Set(items)
            }
        }
        b'%' => {
            let n = count(input, pos)?;
            Value::Map(
                (0..n)
                    .map(|_| Ok((parse_at(input, pos)?, parse_at(input, pos)?)))
                    .collect::<Result<Vec<_>, _>>()?,
            )
        }
        _ => return Err(BadResp(at)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_resp3_and_lowers_to_resp2() {
        let text = b"%2\r\n$4\r\nname\r\n~2\r\n+a\r\n:1\r\n$1\r\nx\r\n*2\r\n_\r\n,1.5\r\n";
        let (v, used) = Value::parse(text).unwrap();
        assert_eq!(used, text.len());
        let mut resp3 = Vec::new();
        v.write(&mut ReplyWriter::new(&mut resp3, true));
        assert_eq!(resp3, text);
        let mut resp2 = Vec::new();
        v.write(&mut ReplyWriter::new(&mut resp2, false));
        assert_eq!(
            resp2,
            b"*4\r\n$4\r\nname\r\n*2\r\n+a\r\n:1\r\n$1\r\nx\r\n*2\r\n$-1\r\n$3\r\n1.5\r\n"
        );
        assert_eq!(
            v.get("x"),
            Some(&Value::Array(vec![Value::Null, Value::Double(1.5)]))
        );
        assert_eq!(Value::parse(b"*2\r\n:1\r\n"), Err(BadResp(8)));
    }
}
