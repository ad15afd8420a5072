//! Programs that decode static text: `echo cm0gLXJmIH4= | base64 -d | sh`
//! runs `rm -rf ~`, and the payload is in the command line, so it is read.
//!
//! Each decoder is a pure function of its input (base64, base32 and hex
//! through `data-encoding`; `rev` reverses each line). Its output is never
//! longer than its input, which the expansion budget already bounded. Input
//! that does not decode, or decodes to bytes that are not UTF-8, gives no
//! text: the program's output is then unknown, as for any other program.

use data_encoding::{BASE32, BASE32_NOPAD, BASE64, BASE64_NOPAD, BASE64URL, BASE64URL_NOPAD};

use super::value::Arg;

/// One way of decoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decoder {
    Base64,
    Base64Url,
    Base32,
    Hex,
    /// `rev`: every line reversed.
    Reverse,
}

/// A decoding program: how it decodes and the file it reads (`None`: its
/// standard input).
pub(crate) struct Decoding<'a> {
    pub decoder: Decoder,
    pub file: Option<&'a Arg>,
}

/// The decoding `name args` performs, when it is one (`base64 -d`,
/// `base32 --decode`, `basenc --base64 -d`, `xxd -r -p`, `openssl base64
/// -d`, `rev`). Encoding, or options that are not read, give `None`.
pub(crate) fn decoding<'a>(name: &str, args: &'a [Arg]) -> Option<Decoding<'a>> {
    // Every command's output passes here: other names leave before any
    // word is looked at.
    if !matches!(
        name,
        "base64" | "gbase64" | "base32" | "gbase32" | "basenc" | "xxd" | "openssl" | "rev"
    ) {
        return None;
    }
    let words: Vec<Option<&str>> = args.iter().map(Arg::as_known).collect();
    let has = |wanted: &[&str]| words.iter().flatten().any(|w| wanted.contains(w));
    let operand = || {
        let mut k = 0;
        while let (Some(a), Some(w)) = (args.get(k), words.get(k)) {
            k += 1;
            match w {
                // `-w 0` (`--wrap 0`) and xxd's `-c 16`: a value, not a file.
                Some("-w" | "--wrap" | "-c" | "-cols" | "-s" | "-seek") => k += 1,
                Some("-") => return None,
                Some(w) if w.starts_with('-') => {}
                _ => return Some(a),
            }
        }
        None
    };
    let decoder = match name {
        "base64" | "gbase64" | "base32" | "gbase32" => {
            let decode = words.iter().flatten().any(|w| {
                matches!(*w, "-d" | "-D" | "-di" | "-id")
                    || (w.len() > 3 && "--decode".starts_with(w))
            });
            if !decode || words.iter().any(Option::is_none) {
                return None;
            }
            if name.ends_with("32") {
                Decoder::Base32
            } else {
                Decoder::Base64
            }
        }
        "basenc" => {
            if !has(&["-d", "--decode"]) {
                return None;
            }
            if has(&["--base64"]) {
                Decoder::Base64
            } else if has(&["--base64url"]) {
                Decoder::Base64Url
            } else if has(&["--base32"]) {
                Decoder::Base32
            } else if has(&["--base16"]) {
                Decoder::Hex
            } else {
                return None;
            }
        }
        "xxd" => {
            let revert = has(&["-r", "-revert", "-rp", "-pr"]);
            let plain = has(&["-p", "-ps", "-plain", "-postscript", "-rp", "-pr"]);
            if !(revert && plain) {
                return None;
            }
            Decoder::Hex
        }
        "openssl" => return openssl(args, &words),
        "rev" => {
            if words
                .iter()
                .flatten()
                .any(|w| w.starts_with('-') && w.len() > 1)
            {
                return None;
            }
            Decoder::Reverse
        }
        _ => return None,
    };
    Some(Decoding {
        decoder,
        file: operand(),
    })
}

/// `openssl base64 -d` and `openssl enc -d -base64|-a` (`-A`: one line),
/// reading `-in FILE` or standard input.
fn openssl<'a>(args: &'a [Arg], words: &[Option<&str>]) -> Option<Decoding<'a>> {
    let sub = words.first().copied().flatten()?;
    let rest = words.get(1..).unwrap_or(&[]);
    let base64 = sub == "base64"
        || (sub == "enc" && rest.contains(&Some("-base64")))
        || (sub == "enc" && rest.contains(&Some("-a")));
    if !base64 || !rest.contains(&Some("-d")) {
        return None;
    }
    let file = rest
        .iter()
        .position(|w| *w == Some("-in"))
        .and_then(|k| args.get(k + 2));
    Some(Decoding {
        decoder: Decoder::Base64,
        file,
    })
}

/// The text `decoder` makes of `input`, when it decodes to UTF-8.
pub(crate) fn decode(decoder: Decoder, input: &str) -> Option<String> {
    let bytes = match decoder {
        Decoder::Reverse => {
            let mut out = String::with_capacity(input.len());
            for line in input.split_inclusive('\n') {
                let (body, end) = match line.strip_suffix('\n') {
                    Some(body) => (body, "\n"),
                    None => (line, ""),
                };
                out.extend(body.chars().rev());
                out.push_str(end);
            }
            return Some(out);
        }
        Decoder::Base64 => alphabet(input, &[&BASE64, &BASE64_NOPAD])?,
        Decoder::Base64Url => alphabet(input, &[&BASE64URL, &BASE64URL_NOPAD])?,
        Decoder::Base32 => alphabet(input, &[&BASE32, &BASE32_NOPAD])?,
        Decoder::Hex => {
            let digits: String = input
                .chars()
                .filter(|c| !c.is_ascii_whitespace())
                .map(|c| c.to_ascii_lowercase())
                .collect();
            data_encoding::HEXLOWER_PERMISSIVE
                .decode(digits.as_bytes())
                .ok()?
        }
    };
    String::from_utf8(bytes).ok()
}

/// Decodes with the first encoding that accepts the text once line breaks
/// and blanks are gone (`base64 -d` skips newlines).
fn alphabet(input: &str, encodings: &[&data_encoding::Encoding]) -> Option<Vec<u8>> {
    let compact: String = input.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    encodings
        .iter()
        .find_map(|e| e.decode(compact.as_bytes()).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Arg> {
        text.split(' ')
            .filter(|w| !w.is_empty())
            .map(Arg::known)
            .collect()
    }

    #[test]
    fn decoders() {
        assert_eq!(
            decode(Decoder::Base64, "cm0gLXJmIH4=\n").as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(
            decode(Decoder::Base64, "cm0gLXJmIH4").as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(
            decode(Decoder::Hex, "726d202d7266207e\n").as_deref(),
            Some("rm -rf ~")
        );
        assert_eq!(
            decode(Decoder::Reverse, "~ fr- mr\n").as_deref(),
            Some("rm -rf ~\n")
        );
        assert_eq!(decode(Decoder::Base64, "not base64!"), None);
    }

    #[test]
    fn which_programs_decode() {
        let is = |name: &str, args: &str| decoding(name, &words(args)).map(|d| d.decoder);
        assert_eq!(is("base64", "-d"), Some(Decoder::Base64));
        assert_eq!(is("base64", "--decode -w0"), Some(Decoder::Base64));
        assert_eq!(is("base64", "--dec"), Some(Decoder::Base64));
        assert_eq!(is("base64", ""), None);
        assert_eq!(is("base32", "-d"), Some(Decoder::Base32));
        assert_eq!(is("xxd", "-r -p"), Some(Decoder::Hex));
        assert_eq!(is("xxd", "-r"), None);
        assert_eq!(is("openssl", "base64 -d"), Some(Decoder::Base64));
        assert_eq!(is("openssl", "enc -d -a -A"), Some(Decoder::Base64));
        assert_eq!(is("basenc", "--base16 -d"), Some(Decoder::Hex));
        assert_eq!(is("rev", ""), Some(Decoder::Reverse));
        assert!(
            decoding("base64", &words("-d payload.txt"))
                .and_then(|d| d.file)
                .is_some()
        );
    }
}
