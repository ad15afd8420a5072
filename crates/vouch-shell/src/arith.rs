//! Bash arithmetic (`$((…))`, `((…))`, `let`, `for ((…))`, array indices
//! and substring offsets) over 64-bit integers, with unknown values.
//!
//! A variable whose value is not a known integer makes every result that
//! depends on it unknown; assignments are collected so the interpreter can
//! apply them. Nesting is bounded: past [`MAX_DEPTH`] the result is unknown.

/// Deepest nesting of parentheses and operators followed.
const MAX_DEPTH: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Num(i64),
    Name(String),
    Op(&'static str),
    Open,
    Close,
}

const OPS: &[&str] = &[
    "<<=", ">>=", "**", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=",
    "*=", "/=", "%=", "&=", "^=", "|=", "+", "-", "*", "/", "%", "<", ">", "&", "^", "|", "!", "~",
    "?", ":", "=", ",",
];

fn parse_number(text: &str) -> Option<i64> {
    if let Some((base, digits)) = text.split_once('#') {
        let base: u32 = base.parse().ok().filter(|b| (2..=64).contains(b))?;
        if base > 36 {
            return None;
        }
        return i64::from_str_radix(digits, base).ok();
    }
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return i64::from_str_radix(hex, 16).ok();
    }
    if text.len() > 1 && text.starts_with('0') {
        return i64::from_str_radix(text.get(1..)?, 8).ok();
    }
    text.parse().ok()
}

fn tokenize(expr: &str) -> Option<Vec<Tok>> {
    let mut out = Vec::new();
    let bytes = expr.as_bytes();
    let mut i = 0;
    while let Some(&c) = bytes.get(i) {
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while bytes
                .get(i)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'#' || *b == b'_')
            {
                i += 1;
            }
            out.push(Tok::Num(parse_number(expr.get(start..i)?)?));
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            let start = i + usize::from(c == b'$');
            i = start;
            let braced = bytes.get(i) == Some(&b'{');
            if braced {
                i += 1;
            }
            let name_start = i;
            while bytes
                .get(i)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
            {
                i += 1;
            }
            let name = expr.get(name_start..i)?.to_owned();
            if braced {
                if bytes.get(i) != Some(&b'}') {
                    return None;
                }
                i += 1;
            }
            if name.is_empty() {
                return None;
            }
            out.push(Tok::Name(name));
            continue;
        }
        if c == b'(' {
            out.push(Tok::Open);
            i += 1;
            continue;
        }
        if c == b')' {
            out.push(Tok::Close);
            i += 1;
            continue;
        }
        let rest = expr.get(i..)?;
        let op = OPS.iter().find(|op| rest.starts_with(**op))?;
        out.push(Tok::Op(op));
        i += op.len();
    }
    Some(out)
}

/// An evaluation: values of variables come from `lookup`, assignments are
/// recorded in order.
pub(crate) struct Eval<'a> {
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
    lookup: &'a dyn Fn(&str) -> Option<i64>,
    /// Assignments made, in order (`None`: an unknown value).
    pub assigned: Vec<(String, Option<i64>)>,
}

/// A value during evaluation: the number (if known) and, for a bare
/// variable, its name (so `=`, `++` can assign it).
#[derive(Clone)]
struct V {
    n: Option<i64>,
    name: Option<String>,
}

fn known(n: i64) -> V {
    V {
        n: Some(n),
        name: None,
    }
}

fn binary(op: &str, a: i64, b: i64) -> Option<i64> {
    Some(match op {
        "+" => a.wrapping_add(b),
        "-" => a.wrapping_sub(b),
        "*" => a.wrapping_mul(b),
        "/" => a.checked_div(b)?,
        "%" => a.checked_rem(b)?,
        "**" => a.wrapping_pow(u32::try_from(b).ok()?),
        "<<" => a.wrapping_shl(u32::try_from(b).ok()?),
        ">>" => a.wrapping_shr(u32::try_from(b).ok()?),
        "<" => i64::from(a < b),
        "<=" => i64::from(a <= b),
        ">" => i64::from(a > b),
        ">=" => i64::from(a >= b),
        "==" => i64::from(a == b),
        "!=" => i64::from(a != b),
        "&" => a & b,
        "^" => a ^ b,
        "|" => a | b,
        "&&" => i64::from(a != 0 && b != 0),
        "||" => i64::from(a != 0 || b != 0),
        _ => return None,
    })
}

fn precedence(op: &str) -> Option<u8> {
    Some(match op {
        "," => 1,
        "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "<<=" | ">>=" | "&=" | "^=" | "|=" => 2,
        "?" => 3,
        "||" => 4,
        "&&" => 5,
        "|" => 6,
        "^" => 7,
        "&" => 8,
        "==" | "!=" => 9,
        "<" | "<=" | ">" | ">=" => 10,
        "<<" | ">>" => 11,
        "+" | "-" => 12,
        "*" | "/" | "%" => 13,
        "**" => 14,
        _ => return None,
    })
}

impl<'a> Eval<'a> {
    /// Evaluates `expr`; `None` when the result is unknown or the text is
    /// not arithmetic bash accepts.
    pub(crate) fn run(expr: &str, lookup: &'a dyn Fn(&str) -> Option<i64>) -> (Option<i64>, Self) {
        let mut eval = Eval {
            toks: Vec::new(),
            pos: 0,
            depth: 0,
            lookup,
            assigned: Vec::new(),
        };
        let Some(toks) = tokenize(expr) else {
            return (None, eval);
        };
        if toks.is_empty() {
            return (Some(0), eval);
        }
        eval.toks = toks;
        let v = eval.expr(0);
        let complete = eval.pos == eval.toks.len();
        (v.and_then(|v| v.n).filter(|_| complete), eval)
    }

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn value_of(&self, v: &V) -> Option<i64> {
        if let Some(name) = &v.name {
            if let Some((_, n)) = self.assigned.iter().rev().find(|(k, _)| k == name) {
                return *n;
            }
            return (self.lookup)(name).or(Some(0)).filter(|_| v.n.is_some());
        }
        v.n
    }

    fn primary(&mut self) -> Option<V> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let tok = self.peek()?.clone();
        self.pos += 1;
        let out = match tok {
            Tok::Num(n) => known(n),
            Tok::Name(name) => {
                let n = match self.assigned.iter().rev().find(|(k, _)| *k == name) {
                    Some((_, n)) => *n,
                    None => (self.lookup)(&name),
                };
                let mut v = V {
                    n,
                    name: Some(name.clone()),
                };
                if let Some(Tok::Op(op @ ("++" | "--"))) = self.peek().cloned() {
                    self.pos += 1;
                    let next = n.map(|x| if op == "++" { x + 1 } else { x - 1 });
                    self.assigned.push((name, next));
                    v.name = None;
                }
                v
            }
            Tok::Open => {
                let inner = self.expr(0)?;
                if self.peek() != Some(&Tok::Close) {
                    return None;
                }
                self.pos += 1;
                V {
                    n: inner.n,
                    name: None,
                }
            }
            Tok::Op(op @ ("++" | "--")) => {
                let target = self.primary()?;
                let name = target.name?;
                let next = target.n.map(|x| if op == "++" { x + 1 } else { x - 1 });
                self.assigned.push((name, next));
                V {
                    n: next,
                    name: None,
                }
            }
            Tok::Op(op @ ("-" | "+" | "!" | "~")) => {
                let inner = self.primary()?;
                let n = inner.n.map(|x| match op {
                    "-" => x.wrapping_neg(),
                    "!" => i64::from(x == 0),
                    "~" => !x,
                    _ => x,
                });
                V { n, name: None }
            }
            Tok::Op(_) | Tok::Close => return None,
        };
        self.depth -= 1;
        Some(out)
    }

    /// One (sub)expression, one level deeper: right-associative chains
    /// (`2**2**…`, `a=b=…`, `1?1?…`) recurse here without passing
    /// [`Eval::primary`]'s parentheses, so the depth is counted here too.
    fn expr(&mut self, min: u8) -> Option<V> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let out = self.expr_here(min);
        self.depth -= 1;
        out
    }

    fn expr_here(&mut self, min: u8) -> Option<V> {
        let mut left = self.primary()?;
        while let Some(Tok::Op(op)) = self.peek().cloned() {
            let Some(prec) = precedence(op) else { break };
            if prec < min {
                break;
            }
            self.pos += 1;
            left = match op {
                "?" => {
                    let yes = self.expr(0)?;
                    if self.peek() != Some(&Tok::Op(":")) {
                        return None;
                    }
                    self.pos += 1;
                    let no = self.expr(prec)?;
                    let n = match left.n {
                        Some(0) => no.n,
                        Some(_) => yes.n,
                        None => None,
                    };
                    V { n, name: None }
                }
                "," => self.expr(prec + 1)?,
                _ if prec == 2 => {
                    let right = self.expr(prec)?;
                    let name = left.name.clone()?;
                    let n = if op == "=" {
                        right.n
                    } else {
                        let base = op.trim_end_matches('=');
                        match (left.n, right.n) {
                            (Some(a), Some(b)) => binary(base, a, b),
                            _ => None,
                        }
                    };
                    self.assigned.push((name, n));
                    V { n, name: None }
                }
                _ => {
                    let next_min = if op == "**" { prec } else { prec + 1 };
                    let right = self.expr(next_min)?;
                    let n = match (left.n, right.n) {
                        (Some(a), Some(b)) => binary(op, a, b),
                        _ => None,
                    };
                    V { n, name: None }
                }
            };
        }
        let _ = self.value_of(&left);
        Some(left)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(expr: &str) -> Option<i64> {
        let lookup = |name: &str| match name {
            "x" => Some(5),
            _ => None,
        };
        Eval::run(expr, &lookup).0
    }

    #[test]
    fn evaluates() {
        assert_eq!(eval("1+2*3"), Some(7));
        assert_eq!(eval("(1+2)*3"), Some(9));
        assert_eq!(eval("x*2"), Some(10));
        assert_eq!(eval("$x+1"), Some(6));
        assert_eq!(eval("2**10"), Some(1024));
        assert_eq!(eval("x > 3 ? 1 : 0"), Some(1));
        assert_eq!(eval("0x10 + 010 + 2#11"), Some(16 + 8 + 3));
        assert_eq!(eval("y + 1"), None);
        assert_eq!(eval("1/0"), None);
        assert_eq!(eval(""), Some(0));
        assert_eq!(eval("-x"), Some(-5));
    }

    #[test]
    fn assignments_are_recorded() {
        let lookup = |_: &str| Some(1);
        let (v, e) = Eval::run("i=3, i++", &lookup);
        assert_eq!(v, Some(3));
        assert_eq!(
            e.assigned,
            vec![("i".to_owned(), Some(3)), ("i".to_owned(), Some(4))]
        );
    }

    #[test]
    fn deep_nesting_is_unknown() {
        let deep = format!("{}1{}", "(".repeat(200), ")".repeat(200));
        assert_eq!(eval(&deep), None);
    }
}
