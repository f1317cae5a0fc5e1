//! The library's value enums as clap values. The library knows nothing of clap, and clap's `ValueEnum` cannot be
//! implemented in this crate for a type of another one: [`named`] is the parser of any of them instead, listing and
//! checking the names the library gives them.

use crate::image_io;
use crate::pipeline::{self, Mapping, Variant};
use crate::sobel::{Border, Compat, Grey, Ksize, Operator};

/// A value enum of the library (its `ALL` and `name()`) as a clap value: clap's own `ValueEnum` cannot be implemented
/// here for a type of another crate, and the library knows nothing of clap.
pub(super) trait Named: Copy + Send + Sync + 'static {
    fn all() -> &'static [Self];
    fn name(self) -> &'static str;
}

macro_rules! named {
    ($($t:ty),* $(,)?) => {$(
        impl Named for $t {
            fn all() -> &'static [Self] {
                &<$t>::ALL
            }
            fn name(self) -> &'static str {
                <$t>::name(self)
            }
        }
    )*};
}
named!(
    Mapping,
    Operator,
    Ksize,
    Border,
    Compat,
    Grey,
    pipeline::Product,
    image_io::PngCompression,
    image_io::Format,
    crate::engine::JpegDecoder,
    crate::batch::PngEncoder,
    crate::engine::PngInflate,
);

/// The parser of a [`Named`] value: checks the name against `T::all()` (the help lists them) and gives the value.
pub(super) fn named<T: Named>() -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(T::all().iter().map(|&v| PossibleValue::new(v.name())))
        .map(|s| T::all().iter().copied().find(|v| v.name() == s).expect("one of the possible values"))
}

/// The parser of `--variant` on a command that runs the strategies `among` (the edge command's or the filter's rows of
/// the one table): their names, and the older aliases the table keeps.
pub(super) fn variants(among: &'static [Variant]) -> impl clap::builder::TypedValueParser<Value = Variant> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let values = among.iter().map(|&v| PossibleValue::new(v.name()).help(v.row().pattern).aliases(v.row().alias));
    PossibleValuesParser::new(values).map(move |s| Variant::named(&s, among).expect("one of the possible values"))
}

/// The bench's own value enums (this crate's types), named as they name themselves.
macro_rules! value_enum {
    ($($t:ty),* $(,)?) => {$(
        impl clap::ValueEnum for $t {
            fn value_variants<'a>() -> &'a [Self] {
                &<$t>::ALL
            }
            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                Some(clap::builder::PossibleValue::new(self.name()))
            }
        }
    )*};
}
value_enum!(crate::bench::Peer, crate::bench::study::Study);
