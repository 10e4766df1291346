//! Result tables as columns: each result type lists its columns once, where it is defined
//! (`table!` for a type of one row per item, `columnar!` for a type already held as columns),
//! and the bindings iterate that list instead of naming the fields again.

use crate::sched::topology::Span;
use crate::time::Ns;

/// One column, typed as the DataFrame will hold it.
#[derive(Debug, Clone)]
pub enum Column {
    U8(Vec<u8>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    Usize(Vec<usize>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    Str(Vec<String>),
    /// A list of CPUs per row (rows of one span share it).
    Cpus(Vec<Span>),
    /// (kHz, ns) spent at each frequency, per row.
    Residency(Vec<Vec<(u32, Ns)>>),
    /// (row, text) of the rows that carry a text.
    Texts(Vec<(usize, String)>),
    /// A list of counts per row (a histogram's buckets).
    Counts(Vec<Vec<u64>>),
}

macro_rules! column_from {
    ($($t:ty => $v:ident),* $(,)?) => {$(
        impl From<$t> for Column {
            fn from(v: $t) -> Column {
                Column::$v(v)
            }
        }
    )*};
}

column_from!(
    Vec<u8> => U8,
    Vec<u32> => U32,
    Vec<u64> => U64,
    Vec<usize> => Usize,
    Vec<i64> => I64,
    Vec<f64> => F64,
    Vec<bool> => Bool,
    Vec<String> => Str,
    Vec<Span> => Cpus,
    Vec<Vec<(u32, Ns)>> => Residency,
    Vec<(usize, String)> => Texts,
    Vec<Vec<u64>> => Counts,
);

/// A struct of one row per item, and `columns(rows)`: its fields as columns, in order.
macro_rules! table {
    ($(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* pub $f:ident: $t:ty,)* }) => {
        $(#[$m])*
        pub struct $name {
            $($(#[$fm])* pub $f: $t,)*
        }

        impl $name {
            /// The rows as columns named as the fields, in their order.
            pub fn columns(rows: &[$name]) -> Vec<(&'static str, $crate::columns::Column)> {
                vec![$((
                    stringify!($f),
                    rows.iter().map(|r| r.$f.clone()).collect::<Vec<$t>>().into(),
                ),)*]
            }
        }
    };
}

/// A struct held as columns (one `Vec` per field), and `into_columns()`: its fields, in order.
macro_rules! columnar {
    ($(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* pub $f:ident: $t:ty,)* }) => {
        $(#[$m])*
        pub struct $name {
            $($(#[$fm])* pub $f: $t,)*
        }

        impl $name {
            /// The columns named as the fields, in their order.
            pub fn into_columns(self) -> Vec<(&'static str, $crate::columns::Column)> {
                vec![$((stringify!($f), self.$f.into()),)*]
            }
        }
    };
}
