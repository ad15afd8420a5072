//! Enum ↔ name tables: a fieldless enum that crosses a boundary (decision
//! JSON, the state database, metrics labels, configuration values) is
//! declared through [`named_enum!`], so each variant's wire name is written
//! exactly once and the serde form, the SQL column value, the metric label
//! and the configuration key's legal values cannot drift apart. Not every
//! such enum is yet: the audit's result, subject kind, path class and
//! awaited decision, `--defer-as` and a few serde `snake_case` enums keep
//! hand-written names (the Known gaps of `src/lib.rs`).
//!
//! Declaration order is meaningful: it is the order of [`ALL`] and [`NAMES`]
//! (metrics arrays, `config show`, error messages) and of the derived `Ord`,
//! which the strictness scales use (loosest first).
//!
//! A proc-macro crate (strum) would generate the same tables, but it keeps a
//! second major version of `syn` in the build for what is one page here.
//!
//! [`ALL`]: Outcome::ALL
//! [`NAMES`]: Outcome::NAMES

/// A name that is not one of an enum's variants.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{found}` is not one of {expected}")]
pub struct UnknownName {
    pub found: String,
    pub expected: String,
}

impl UnknownName {
    pub fn new(found: &str, names: &[&str]) -> UnknownName {
        UnknownName {
            found: found.to_owned(),
            expected: names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// Declares a fieldless enum whose variants each carry one wire name, with
/// `ALL`, `NAMES`, `as_str`, `from_name`, `index`, `Display`, `FromStr` and
/// serde implementations derived from that one table.
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// Every wire name, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The wire name.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// The variant with this wire name (exact, case-sensitive).
            pub fn from_name(name: &str) -> Option<$name> {
                $name::ALL.iter().copied().find(|v| v.as_str() == name)
            }

            /// Position in declaration order, for arrays indexed by variant.
            pub const fn index(self) -> usize {
                self as usize
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::names::UnknownName;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $name::from_name(s).ok_or_else(|| $crate::names::UnknownName::new(s, $name::NAMES))
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Names;
                impl ::serde::de::Visitor<'_> for Names {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        write!(f, "one of {}", $name::NAMES.join(", "))
                    }
                    fn visit_str<E: ::serde::de::Error>(self, v: &str) -> Result<$name, E> {
                        $name::from_name(v).ok_or_else(|| E::unknown_variant(v, $name::NAMES))
                    }
                }
                deserializer.deserialize_str(Names)
            }
        }
    };
}
pub(crate) use named_enum;

#[cfg(test)]
mod tests {
    crate::names::named_enum! {
        /// A test scale.
        enum Level {
            Low = "low",
            High = "high",
        }
    }

    #[test]
    fn one_table_drives_every_form() {
        assert_eq!(Level::NAMES, &["low", "high"]);
        assert_eq!(Level::ALL, &[Level::Low, Level::High]);
        assert_eq!(Level::High.as_str(), "high");
        assert_eq!(Level::High.index(), 1);
        assert_eq!("low".parse::<Level>(), Ok(Level::Low));
        let err = "Low".parse::<Level>().unwrap_err().to_string();
        assert_eq!(err, "`Low` is not one of `low`, `high`");
        assert_eq!(serde_json::to_string(&Level::Low).unwrap(), "\"low\"");
        assert_eq!(
            serde_json::from_str::<Level>("\"high\"").unwrap(),
            Level::High
        );
        let err = serde_json::from_str::<Level>("\"mid\"").unwrap_err();
        assert!(err.to_string().contains("unknown variant `mid`"), "{err}");
        assert!(Level::Low < Level::High);
    }
}

// The vocabulary every layer shares (configuration, policy, the decision,
// the audit): declared here, at the bottom, so that none of them imports
// another to name an outcome or a risk.

named_enum! {
    /// What the harness should do. Declared loosest first: `allow` < `defer`
    /// < `deny` is the tighten-only order of configuration actions.
    pub enum Outcome {
        Allow = "allow",
        /// Hand the action to the human (the harness's own prompt).
        Defer = "defer",
        Deny = "deny",
    }
}

impl Outcome {
    /// Strictness order used by tighten-only config: allow < defer < deny.
    pub fn strictness(self) -> u8 {
        u8::try_from(self.index()).unwrap_or(u8::MAX)
    }
}

named_enum! {
    /// Risk taxonomy shared by the reviewer verdict and the host rules.
    pub enum RiskLevel {
        Low = "low",
        Medium = "medium",
        High = "high",
        Critical = "critical",
    }
}
