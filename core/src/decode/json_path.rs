//! Where Gemini's streamed arguments go: the JSON path of the last value written, the
//! containers open below the args object, and the path syntax (`$.a.b[0]`, `$['a b']`).
//! A leaf: the state is kept between events in the decoder's shared state.

/// The most containers a streamed argument path may open below the args object.
pub(crate) const MAX_LEVELS: usize = 62;

/// The call whose arguments arrive as `partialArgs`, and where its JSON text is.
#[derive(Debug)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub(crate) struct Assembler<'a> {
    /// The path of the last value written.
    pub(crate) path: &'a mut [u8],
    pub(crate) path_len: usize,
    /// The streamed call's slot.
    pub(crate) slot: Option<usize>,
    /// A streamed call found no slot: its pieces are dropped until it ends.
    pub(crate) refused: bool,
    /// Containers open below the args object.
    pub(crate) depth: usize,
    /// Bit `l`: the container at level `l` is an object (level 0, the args, always is).
    pub(crate) objects: u64,
    /// Bit `l`: the container at level `l` has a member already.
    pub(crate) filled: u64,
    /// The last value is a string still open (`willContinue`).
    pub(crate) string_open: bool,
    /// A piece could not be placed: the arguments are broken, the rest is dropped.
    pub(crate) broken: bool,
}

impl<'a> Assembler<'a> {
    pub(crate) fn new(path: &'a mut [u8]) -> Self {
        Self {
            path,
            path_len: 0,
            slot: None,
            refused: false,
            depth: 0,
            objects: 1,
            filled: 0,
            string_open: false,
            broken: false,
        }
    }

    pub(crate) fn reset(&mut self) {
        self.path_len = 0;
        self.slot = None;
        self.refused = false;
        self.depth = 0;
        self.objects = 1;
        self.filled = 0;
        self.string_open = false;
        self.broken = false;
    }
}

/// One step of a path: a member name or an array index.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Seg<'p> {
    Key(&'p [u8]),
    Index(&'p [u8]),
}

impl Seg<'_> {
    pub(crate) fn is_key(&self) -> bool {
        matches!(self, Seg::Key(_))
    }
}

/// The steps of a JSON path (`$.a.b[0]`, `$['a b']`), at most `MAX_LEVELS + 1`.
pub(crate) fn parse_path<'p>(p: &'p [u8], out: &mut [Seg<'p>; MAX_LEVELS + 1]) -> Option<usize> {
    let mut n = 0;
    let mut i = 1;
    if p.first() != Some(&b'$') {
        return None;
    }
    while i < p.len() {
        let seg = match p[i] {
            b'.' => {
                let start = i + 1;
                let end = p[start..]
                    .iter()
                    .position(|&c| c == b'.' || c == b'[')
                    .map_or(p.len(), |k| start + k);
                i = end;
                Seg::Key(p.get(start..end).filter(|k| !k.is_empty())?)
            }
            b'[' => match p.get(i + 1)? {
                q @ (b'\'' | b'"') => {
                    let start = i + 2;
                    let len = p.get(start..)?.iter().position(|c| c == q)?;
                    if p.get(start + len + 1) != Some(&b']') {
                        return None;
                    }
                    i = start + len + 2;
                    Seg::Key(&p[start..start + len])
                }
                _ => {
                    let start = i + 1;
                    let len = p[start..].iter().position(|&c| c == b']')?;
                    let digits = &p[start..start + len];
                    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                        return None;
                    }
                    i = start + len + 1;
                    Seg::Index(digits)
                }
            },
            _ => return None,
        };
        *out.get_mut(n)? = seg;
        n += 1;
    }
    Some(n)
}
