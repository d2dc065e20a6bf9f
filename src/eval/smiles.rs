//! SMILES to molecular graphs, and "same molecule" by graph isomorphism:
//! the functional metric of the SMILES task (`smiles`).
//!
//! # Procedure
//!
//! 1. [`parse`] reads one SMILES string (the OpenSMILES syntax of
//!    `grammars/smiles.ebnf`) into a graph: one node per atom, one edge per
//!    bond. Ring-closure labels are paired (an unpaired label, a bond to the
//!    atom itself, two bonds between the same atoms, or two different bond
//!    symbols on the ends of one ring bond make it not a molecule), branches
//!    and `.` disconnections are followed.
//! 2. An atom ([`Atom`]) is its element, aromaticity (lower-case symbol),
//!    isotope, charge and **total** hydrogen count: a bracket atom's `H`
//!    count, or for an organic-subset atom the implicit count of OpenSMILES
//!    (the smallest normal valence — B 3; C 4; N, P 3 or 5; O 2; S 2, 4 or
//!    6; halogens 1 — not below the sum of its bond orders, minus that sum;
//!    an aromatic atom counts its aromatic bonds as 1 and one more for the
//!    π bond, against its first valence only). Plain hydrogen atoms
//!    (`[H]`, neutral, no isotope, one single bond to a heavy atom) are
//!    folded into their neighbour's count, as RDKit does.
//! 3. A bond ([`Bond`]) is single, double, triple, quadruple or aromatic.
//!    An unwritten bond is aromatic between two aromatic atoms when it lies
//!    on a ring, otherwise single (so biphenyl written `c1ccccc1c1ccccc1`
//!    equals `c1ccccc1-c1ccccc1`).
//! 4. [`same_molecule`] compares two graphs with `petgraph`'s VF2
//!    isomorphism, atoms and bonds matched by equality.
//!
//! What is **not** compared: stereochemistry (`@`, `@@`, `/`, `\` are read
//! and dropped, directional bonds count as single), atom classes (`:n`),
//! and different electron bookkeeping of one molecule: an aromatic form and
//! a Kekulé form (`c1ccccc1` and `C1=CC=CC=C1`) are different graphs here,
//! as are two Kekulé structures with the double bonds in other places, and
//! charge-separated against neutral spellings (`[N+](=O)[O-]` and `N(=O)=O`).
//! RDKit, which perceives aromaticity, calls those the same.

use std::collections::HashMap;

use petgraph::graph::{NodeIndex, UnGraph};

use crate::error::{Error, ErrorKind, Result};

/// An atom of a molecular graph.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Atom {
    /// Element symbol with its first letter upper-case (`C`, `Cl`, `Se`), or
    /// `*` for a wildcard.
    pub element: String,
    /// Written as an aromatic (lower-case) atom.
    pub aromatic: bool,
    /// Mass number (0: none written).
    pub isotope: u16,
    /// Formal charge.
    pub charge: i32,
    /// Hydrogens attached: written in brackets, implicit, or folded `[H]`.
    pub hydrogens: u32,
}

/// A bond of a molecular graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Bond {
    /// `-`, `/`, `\`, or unwritten between atoms not both aromatic.
    Single,
    /// `=`.
    Double,
    /// `#`.
    Triple,
    /// `$`.
    Quadruple,
    /// `:`, or unwritten between two aromatic atoms on a ring.
    Aromatic,
}

impl Bond {
    /// Order for valence sums (aromatic: 1, see the module docs).
    fn order(self) -> u32 {
        match self {
            Bond::Single | Bond::Aromatic => 1,
            Bond::Double => 2,
            Bond::Triple => 3,
            Bond::Quadruple => 4,
        }
    }
}

/// A molecule: atoms and bonds as an undirected graph.
#[derive(Clone, Debug)]
pub struct Molecule {
    /// The graph.
    pub graph: UnGraph<Atom, Bond>,
}

impl Molecule {
    /// Whether `self` and `other` are the same graph up to atom order
    /// (VF2, atoms and bonds compared by equality).
    pub fn same_as(&self, other: &Molecule) -> bool {
        let (g, h) = (&self.graph, &other.graph);
        if g.node_count() != h.node_count() || g.edge_count() != h.edge_count() {
            return false;
        }
        let mut a: Vec<&Atom> = g.node_weights().collect();
        let mut b: Vec<&Atom> = h.node_weights().collect();
        a.sort_unstable();
        b.sort_unstable();
        if a != b {
            return false;
        }
        let mut a: Vec<Bond> = g.edge_weights().copied().collect();
        let mut b: Vec<Bond> = h.edge_weights().copied().collect();
        a.sort_unstable();
        b.sort_unstable();
        if a != b {
            return false;
        }
        petgraph::algo::is_isomorphic_matching(g, h, |x, y| x == y, |x, y| x == y)
    }
}

/// Whether `a` and `b` parse and are the same molecule (see the module
/// docs); a string that does not parse is the same as nothing.
pub fn same_molecule(a: &str, b: &str) -> bool {
    match (parse(a), parse(b)) {
        (Ok(x), Ok(y)) => x.same_as(&y),
        _ => false,
    }
}

const ELEMENTS: &[&str] = &[
    "H", "He", "Li", "Be", "B", "C", "N", "O", "F", "Ne", "Na", "Mg", "Al", "Si", "P", "S", "Cl",
    "Ar", "K", "Ca", "Sc", "Ti", "V", "Cr", "Mn", "Fe", "Co", "Ni", "Cu", "Zn", "Ga", "Ge", "As",
    "Se", "Br", "Kr", "Rb", "Sr", "Y", "Zr", "Nb", "Mo", "Tc", "Ru", "Rh", "Pd", "Ag", "Cd", "In",
    "Sn", "Sb", "Te", "I", "Xe", "Cs", "Ba", "La", "Ce", "Pr", "Nd", "Pm", "Sm", "Eu", "Gd", "Tb",
    "Dy", "Ho", "Er", "Tm", "Yb", "Lu", "Hf", "Ta", "W", "Re", "Os", "Ir", "Pt", "Au", "Hg", "Tl",
    "Pb", "Bi", "Po", "At", "Rn", "Fr", "Ra", "Ac", "Th", "Pa", "U", "Np", "Pu", "Am", "Cm", "Bk",
    "Cf", "Es", "Fm", "Md", "No", "Lr", "Rf", "Db", "Sg", "Bh", "Hs", "Mt", "Ds", "Rg", "Cn", "Nh",
    "Fl", "Mc", "Lv", "Ts", "Og",
];

/// Normal valences of the organic subset.
fn valences(element: &str) -> &'static [u32] {
    match element {
        "B" => &[3],
        "C" => &[4],
        "N" | "P" => &[3, 5],
        "O" => &[2],
        "S" => &[2, 4, 6],
        "F" | "Cl" | "Br" | "I" => &[1],
        _ => &[],
    }
}

/// An atom while parsing: the atom and whether its hydrogens are implicit.
struct Pending {
    atom: Atom,
    implicit_h: bool,
}

fn err(s: &str, pos: usize, what: &str) -> Error {
    Error::new(
        ErrorKind::Grammar,
        format!("not a SMILES molecule: {what} at byte {pos} of {s:?}"),
    )
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
        None => String::new(),
    }
}

/// Reads the bracket atom `b` (without `[` `]`).
fn bracket_atom(s: &str, pos: usize, b: &str) -> Result<Atom> {
    let bytes = b.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let st = *i;
        while *i < bytes.len() && bytes[*i].is_ascii_digit() {
            *i += 1;
        }
        &b[st..*i]
    };
    let iso = digits(&mut i);
    let isotope: u16 = if iso.is_empty() {
        0
    } else {
        iso.parse()
            .map_err(|_| err(s, pos, "isotope out of range"))?
    };
    // Symbol: `*`, an aromatic symbol, or the longest element.
    let rest = &b[i..];
    let (element, aromatic, len) = if rest.starts_with('*') {
        ("*".to_string(), false, 1)
    } else if let Some(a) = ["se", "as", "te"].iter().find(|a| rest.starts_with(**a)) {
        (upper_first(a), true, 2)
    } else if let Some(c) = rest.chars().next().filter(|c| "bcnops".contains(*c)) {
        (c.to_ascii_uppercase().to_string(), true, 1)
    } else if let Some(two) = rest.get(..2).filter(|t| ELEMENTS.contains(t)) {
        (two.to_string(), false, 2)
    } else if let Some(one) = rest.get(..1).filter(|t| ELEMENTS.contains(t)) {
        (one.to_string(), false, 1)
    } else {
        return Err(err(s, pos, "unknown element in a bracket atom"));
    };
    i += len;
    // Chirality (dropped): `@`, `@@`, `@TH1`, `@AL2`, `@SP3`, `@TB12`, `@OH25`.
    if i < bytes.len() && bytes[i] == b'@' {
        i += 1;
        if i < bytes.len() && bytes[i] == b'@' {
            i += 1;
        } else {
            for cls in ["TH", "AL", "SP", "TB", "OH"] {
                if b[i..].starts_with(cls) {
                    i += 2;
                    digits(&mut i);
                    break;
                }
            }
        }
    }
    let mut hydrogens = 0;
    if i < bytes.len() && bytes[i] == b'H' {
        i += 1;
        let d = digits(&mut i);
        hydrogens = if d.is_empty() {
            1
        } else {
            d.parse().map_err(|_| err(s, pos, "bad hydrogen count"))?
        };
    }
    let mut charge = 0i32;
    if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
        let sign = if bytes[i] == b'+' { 1 } else { -1 };
        i += 1;
        if i < bytes.len() && bytes[i] == bytes[i - 1] {
            i += 1;
            charge = 2 * sign;
        } else {
            let d = digits(&mut i);
            let n: i32 = if d.is_empty() {
                1
            } else {
                d.parse().map_err(|_| err(s, pos, "bad charge"))?
            };
            charge = sign * n;
        }
    }
    if i < bytes.len() && bytes[i] == b':' {
        i += 1;
        if digits(&mut i).is_empty() {
            return Err(err(s, pos, "atom class without a number"));
        }
    }
    if i != bytes.len() {
        return Err(err(s, pos + i, "unexpected text in a bracket atom"));
    }
    Ok(Atom {
        element,
        aromatic,
        isotope,
        charge,
        hydrogens,
    })
}

/// A written bond symbol.
fn bond_of(c: u8) -> Option<Bond> {
    Some(match c {
        b'-' | b'/' | b'\\' => Bond::Single,
        b'=' => Bond::Double,
        b'#' => Bond::Triple,
        b'$' => Bond::Quadruple,
        b':' => Bond::Aromatic,
        _ => return None,
    })
}

/// Parses one SMILES string into a [`Molecule`] (see the module docs).
///
/// # Errors
/// [`ErrorKind::Grammar`]: the string is empty, not SMILES, or not one
/// molecule graph (unpaired ring labels, a ring bond to the atom itself,
/// two bonds between the same two atoms, ring-bond symbols that disagree).
pub fn parse(s: &str) -> Result<Molecule> {
    let bytes = s.as_bytes();
    let mut atoms: Vec<Pending> = Vec::new();
    // (a, b, written bond)
    let mut bonds: Vec<(usize, usize, Option<Bond>)> = Vec::new();
    let mut prev: Option<usize> = None;
    let mut bond: Option<Bond> = None;
    let mut dot = false;
    let mut branches: Vec<usize> = Vec::new();
    let mut rings: HashMap<u32, (usize, Option<Bond>)> = HashMap::new();
    let mut i = 0;
    let add_bond = |bonds: &mut Vec<(usize, usize, Option<Bond>)>,
                    a: usize,
                    b: usize,
                    k: Option<Bond>,
                    pos: usize|
     -> Result<()> {
        if a == b {
            return Err(err(s, pos, "a ring bond from an atom to itself"));
        }
        if bonds
            .iter()
            .any(|&(x, y, _)| (x, y) == (a, b) || (x, y) == (b, a))
        {
            return Err(err(s, pos, "two bonds between the same atoms"));
        }
        bonds.push((a, b, k));
        Ok(())
    };
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        // An atom?
        let atom = match c {
            b'[' => {
                let end = s[i..]
                    .find(']')
                    .ok_or_else(|| err(s, i, "unclosed bracket atom"))?;
                let a = bracket_atom(s, i, &s[i + 1..i + end])?;
                i += end + 1;
                Some(Pending {
                    atom: a,
                    implicit_h: false,
                })
            }
            b'*' => {
                i += 1;
                Some(Pending {
                    atom: Atom {
                        element: "*".into(),
                        aromatic: false,
                        isotope: 0,
                        charge: 0,
                        hydrogens: 0,
                    },
                    implicit_h: false,
                })
            }
            _ if c.is_ascii_alphabetic() => {
                let two = s.get(i..i + 2);
                let (el, aromatic, len) = if two == Some("Cl") || two == Some("Br") {
                    (two.unwrap_or_default().to_string(), false, 2)
                } else if b"BCNOPSFI".contains(&c) {
                    ((c as char).to_string(), false, 1)
                } else if b"bcnops".contains(&c) {
                    ((c.to_ascii_uppercase() as char).to_string(), true, 1)
                } else {
                    return Err(err(s, i, "not an organic-subset atom"));
                };
                i += len;
                Some(Pending {
                    atom: Atom {
                        element: el,
                        aromatic,
                        isotope: 0,
                        charge: 0,
                        hydrogens: 0,
                    },
                    implicit_h: true,
                })
            }
            _ => None,
        };
        if let Some(a) = atom {
            let n = atoms.len();
            atoms.push(a);
            if let Some(p) = prev.filter(|_| !dot) {
                add_bond(&mut bonds, p, n, bond, start)?;
            } else if bond.is_some() {
                return Err(err(s, start, "a bond with no atom before it"));
            }
            prev = Some(n);
            bond = None;
            dot = false;
            continue;
        }
        match c {
            b'(' => {
                let p = prev.ok_or_else(|| err(s, i, "a branch with no atom before it"))?;
                if bond.is_some() || dot {
                    return Err(err(s, i, "a bond before a branch"));
                }
                branches.push(p);
                i += 1;
            }
            b')' => {
                if bond.is_some() || dot {
                    return Err(err(s, i, "a bond at the end of a branch"));
                }
                prev = Some(branches.pop().ok_or_else(|| err(s, i, "unopened branch"))?);
                i += 1;
            }
            b'.' => {
                if bond.is_some() || dot || prev.is_none() {
                    return Err(err(s, i, "a misplaced '.'"));
                }
                dot = true;
                i += 1;
            }
            b'0'..=b'9' | b'%' => {
                let label = if c == b'%' {
                    let d = s
                        .get(i + 1..i + 3)
                        .filter(|d| d.bytes().all(|b| b.is_ascii_digit()))
                        .ok_or_else(|| err(s, i, "'%' without two digits"))?;
                    i += 3;
                    d.parse::<u32>().unwrap_or(0) + 100
                } else {
                    i += 1;
                    (c - b'0') as u32
                };
                let p = prev
                    .filter(|_| !dot)
                    .ok_or_else(|| err(s, start, "a ring label with no atom before it"))?;
                match rings.remove(&label) {
                    Some((q, k)) => {
                        let k = match (k, bond) {
                            (Some(x), Some(y)) if x != y => {
                                return Err(err(s, start, "ring-bond symbols disagree"))
                            }
                            (x, y) => x.or(y),
                        };
                        add_bond(&mut bonds, q, p, k, start)?;
                    }
                    None => {
                        rings.insert(label, (p, bond));
                    }
                }
                bond = None;
            }
            _ => match bond_of(c) {
                Some(k) => {
                    if bond.is_some() || dot {
                        return Err(err(s, i, "two bonds in a row"));
                    }
                    bond = Some(k);
                    i += 1;
                }
                None => return Err(err(s, i, "unexpected character")),
            },
        }
    }
    if atoms.is_empty() {
        return Err(err(s, 0, "no atom"));
    }
    if bond.is_some() || dot {
        return Err(err(s, s.len(), "a bond at the end"));
    }
    if !branches.is_empty() {
        return Err(err(s, s.len(), "unclosed branch"));
    }
    if let Some(l) = rings.keys().min() {
        return Err(err(s, s.len(), &format!("ring label {l} is not closed")));
    }
    Ok(build(atoms, bonds))
}

/// Whether the bond `e` lies on a ring: its ends stay connected without it.
fn on_ring(n: usize, bonds: &[(usize, usize, Option<Bond>)], e: usize) -> bool {
    let (a, b, _) = bonds[e];
    let mut adj = vec![Vec::new(); n];
    for (k, &(x, y, _)) in bonds.iter().enumerate() {
        if k != e {
            adj[x].push(y);
            adj[y].push(x);
        }
    }
    let mut seen = vec![false; n];
    let mut stack = vec![a];
    seen[a] = true;
    while let Some(x) = stack.pop() {
        if x == b {
            return true;
        }
        for &y in &adj[x] {
            if !seen[y] {
                seen[y] = true;
                stack.push(y);
            }
        }
    }
    false
}

fn build(mut atoms: Vec<Pending>, bonds: Vec<(usize, usize, Option<Bond>)>) -> Molecule {
    let n = atoms.len();
    let kinds: Vec<Bond> = (0..bonds.len())
        .map(|e| {
            let (a, b, k) = bonds[e];
            k.unwrap_or_else(|| {
                if atoms[a].atom.aromatic && atoms[b].atom.aromatic && on_ring(n, &bonds, e) {
                    Bond::Aromatic
                } else {
                    Bond::Single
                }
            })
        })
        .collect();
    // Implicit hydrogens of organic-subset atoms.
    let mut sum = vec![0u32; n];
    for (e, &(a, b, _)) in bonds.iter().enumerate() {
        sum[a] += kinds[e].order();
        sum[b] += kinds[e].order();
    }
    for (k, p) in atoms.iter_mut().enumerate() {
        if !p.implicit_h {
            continue;
        }
        let vs = valences(&p.atom.element);
        p.atom.hydrogens = if p.atom.aromatic {
            vs.first().map_or(0, |v| v.saturating_sub(sum[k] + 1))
        } else {
            vs.iter().find(|&&v| v >= sum[k]).map_or(0, |v| v - sum[k])
        };
    }
    // Fold plain [H] atoms into their one heavy neighbour.
    let degree = |k: usize| bonds.iter().filter(|&&(a, b, _)| a == k || b == k).count();
    let mut folded = vec![false; n];
    for (e, &(a, b, _)) in bonds.iter().enumerate() {
        for (h, other) in [(a, b), (b, a)] {
            let ha = &atoms[h].atom;
            let plain = ha.element == "H"
                && !atoms[h].implicit_h
                && ha.isotope == 0
                && ha.charge == 0
                && ha.hydrogens == 0;
            if plain
                && kinds[e] == Bond::Single
                && degree(h) == 1
                && atoms[other].atom.element != "H"
                && !folded[other]
            {
                folded[h] = true;
                atoms[other].atom.hydrogens += 1;
            }
        }
    }
    let mut graph = UnGraph::with_capacity(n, bonds.len());
    let mut ix: Vec<Option<NodeIndex>> = Vec::with_capacity(n);
    for (k, p) in atoms.into_iter().enumerate() {
        ix.push((!folded[k]).then(|| graph.add_node(p.atom)));
    }
    for (e, &(a, b, _)) in bonds.iter().enumerate() {
        if let (Some(x), Some(y)) = (ix[a], ix[b]) {
            graph.add_edge(x, y, kinds[e]);
        }
    }
    Molecule { graph }
}

/// One instance of the SMILES task, with the fields of `eth-sri/smiles-eval`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SmilesInstance {
    /// Its id (`sample/17` for row 17 of the shipped sample).
    pub instance_id: String,
    /// The prompt (the model's chat prompt when it has a chat template;
    /// empty for the shipped sample).
    #[serde(default)]
    pub input: String,
    /// The gold molecule.
    pub output: String,
}

/// Reads instances from a JSON-lines file (blank lines skipped).
///
/// # Errors
/// [`ErrorKind::Io`]: the file cannot be read, or a line is not an instance.
pub fn read_instances(path: &std::path::Path) -> Result<Vec<SmilesInstance>> {
    super::tasks::read_jsonl(path)
}

/// The instances of a SMILES file (one molecule per line, the first
/// whitespace-separated field; blank lines skipped), each row once, in an
/// order drawn from `data_seed` (Fisher–Yates with SplitMix64), so
/// `--limit N` takes a deterministic random sample. Ids are `sample/ROW`
/// (0-based row among the non-blank ones); the input is empty.
///
/// # Errors
/// [`ErrorKind::Io`]: the file cannot be read.
pub fn sample_instances(path: &std::path::Path, data_seed: u64) -> Result<Vec<SmilesInstance>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::new(
            ErrorKind::Io,
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    let mut out: Vec<SmilesInstance> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .enumerate()
        .map(|(i, m)| SmilesInstance {
            instance_id: format!("sample/{i}"),
            input: String::new(),
            output: m.to_string(),
        })
        .collect();
    let mut rng = crate::rng::SplitMix64::new(data_seed ^ 0x5353_4d49_4c45_5321);
    for i in (1..out.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        out.swap(i, j);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: &str, b: &str) -> bool {
        same_molecule(a, b)
    }

    #[test]
    fn equal_pairs() {
        for (a, b) in [
            ("OCC", "CCO"),
            ("C(C)O", "CCO"),
            ("C1CCCCC1", "C2CCCCC2"),
            ("C1CC2CCCC2CC1", "C1CCC2CCCC2C1"),
            ("c1ccccc1O", "Oc1ccccc1"),
            ("c1ccc2ccccc2c1", "c1cccc2c1cccc2"),
            ("C%10CC%10", "C1CC1"),
            ("C=1CCCCC1", "C1CCCCC=1"),
            ("[CH4]", "C"),
            ("[H]C([H])([H])[H]", "C"),
            ("[NH4+]", "[H][N+]([H])([H])[H]"),
            ("C[C@H](N)O", "C[C@@H](N)O"),
            ("F/C=C/F", "FC=CF"),
            ("[Na+].[Cl-]", "[Cl-].[Na+]"),
            ("c1ccccc1c1ccccc1", "c1ccccc1-c1ccccc1"),
            ("CC(=O)O", "OC(C)=O"),
            ("[13CH3]C", "C[13CH3]"),
            ("c1cc[nH]c1", "[nH]1cccc1"),
        ] {
            assert!(same(a, b), "{a} and {b} are one molecule");
            assert!(same(b, a), "{b} and {a} are one molecule");
        }
    }

    #[test]
    fn unequal_pairs() {
        for (a, b) in [
            ("CCO", "COC"),
            ("CCO", "CCN"),
            ("CC=O", "CCO"),
            ("C1CCCCC1", "CCCCCC"),
            ("c1ccccc1", "C1=CC=CC=C1"),
            ("[CH2]", "C"),
            ("[13CH4]", "C"),
            ("[NH4+]", "N"),
            ("CC(C)C", "CCCC"),
            ("C1CC1C", "C1CCC1"),
            ("c1ccncc1", "c1ccccc1"),
            ("[O-]C", "OC"),
            ("Cl", "Br"),
            ("CCl", "C.Cl"),
        ] {
            assert!(!same(a, b), "{a} and {b} differ");
        }
    }

    #[test]
    fn hydrogens_and_bonds() {
        let m = parse("C=CC#N").unwrap();
        let h: Vec<u32> = m.graph.node_weights().map(|a| a.hydrogens).collect();
        assert_eq!(h, [2, 1, 0, 0]);
        let m = parse("c1ccccc1").unwrap();
        assert!(m
            .graph
            .node_weights()
            .all(|a| a.hydrogens == 1 && a.aromatic));
        assert!(m.graph.edge_weights().all(|&b| b == Bond::Aromatic));
        let m = parse("CS(=O)(=O)C").unwrap();
        let s = m.graph.node_weights().nth(1).unwrap();
        assert_eq!((s.element.as_str(), s.hydrogens), ("S", 0));
        let m = parse("[Fe++]").unwrap();
        assert_eq!(m.graph.node_weights().next().unwrap().charge, 2);
        let m = parse("[Se]").unwrap();
        assert_eq!(m.graph.node_weights().next().unwrap().element, "Se");
        let m = parse("[se]1cccc1").unwrap();
        assert!(m.graph.node_weights().next().unwrap().aromatic);
    }

    #[test]
    fn random_text_never_panics() {
        let alphabet: Vec<char> = "CNOSPFIBrlcnops[]()=#$:/\\.%@+-H0123456789*éSeas"
            .chars()
            .collect();
        let mut rng = crate::rng::SplitMix64::new(5);
        let mut parsed = 0;
        for _ in 0..20_000 {
            let n = rng.below(12) as usize;
            let t: String = (0..n)
                .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
                .collect();
            if let Ok(m) = parse(&t) {
                parsed += 1;
                assert!(m.same_as(&m), "{t}");
            }
        }
        assert!(parsed > 100, "{parsed}");
    }

    #[test]
    fn not_molecules() {
        for s in [
            "", "C1CC", "C11", "C12CC12", "C(C", "C)C", "C=", "=C", "C..C", "[Xx]", "C%1", "Q",
            "C=1CC-1", "C[CH3", "(C)C", "[Cé]", "[é]", "Cé", "é", "[C@é]", "C%é1",
        ] {
            assert!(parse(s).is_err(), "{s:?} is not a molecule");
            assert!(!same_molecule(s, s));
        }
    }
}
