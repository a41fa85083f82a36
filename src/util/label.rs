//! `labels!`: an enum whose every variant has one fixed text, used for the status-like
//! fields of the report (`insertOrder.basis`, `scale.benefit`, …). Code branches on the
//! variant; the text exists once, for `Display` and for serde (the JSON keeps the words).

/// `labels! { pub(crate) enum Benefit { Full => "full", … } }` defines the enum with `as_str`,
/// `Display` and `Serialize` (as its text).
#[macro_export]
macro_rules! labels {
    ($(#[$m:meta])* $vis:vis enum $name:ident { $($(#[$vm:meta])* $v:ident => $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name { $($(#[$vm])* $v),+ }

        impl $name {
            /// Every variant, in declaration order.
            #[allow(dead_code)]
            pub(crate) const ALL: &'static [$name] = &[$($name::$v),+];

            /// The variant's text, as the report prints it.
            pub(crate) fn as_str(self) -> &'static str {
                match self { $($name::$v => $s),+ }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}

#[cfg(test)]
mod tests {
    crate::labels! {
        enum Colour { Red => "red", DarkBlue => "dark blue" }
    }

    #[test]
    fn a_label_prints_and_serializes_as_its_text() {
        assert_eq!(Colour::DarkBlue.to_string(), "dark blue");
        assert_eq!(serde_json::to_string(&Colour::Red).unwrap(), "\"red\"");
        assert_eq!(Colour::ALL, &[Colour::Red, Colour::DarkBlue]);
    }
}
