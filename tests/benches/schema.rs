//! Criterion benchmarks of [`Schema`]: every BFCL call that has a function, checked against
//! that function's input schema (2,935 pairs over 2,452 declarations), beside the
//! `jsonschema` crate on the same pairs in the same run.
//!
//! * `bfcl_args/polyweave`: [`Schema::validate`] of each call's args, each function's schema
//!   read once by [`Schema::new`] beforehand. Throughput is in bytes of args.
//! * `bfcl_args/jsonschema`: `serde_json::from_slice` of the args and `Validator::validate`,
//!   each function's validator compiled once beforehand (`jsonschema` validates a tree, not
//!   bytes, so building the tree is part of its work).
//! * `schema_new/polyweave`: [`Schema::new`] of every declaration. Throughput is in
//!   declarations.
//!
//! Before timing, the bench checks that both validators give every pair the same answer and
//! counts the allocations of one pass of each (the global allocator counts, as the no-heap
//! tests' does; its check costs a thread-local read an allocation, `jsonschema`'s only).
//!
//! Run: `cargo bench -p polyweave-tests --bench schema -- --warm-up-time 1 --measurement-time 3`
//!
//! For instruction counts, set `POLYWEAVE_BENCH_ONCE` to `schema_validate`,
//! `jsonschema_validate` or `schema_new` (and `POLYWEAVE_BENCH_ITERS`, default 1): the binary
//! runs that loop in `run_once` and exits, printing the bytes one pass covers;
//! `tests/bench/instructions.sh schema` divides the counts by them.

use std::hint::black_box;

mod common;

use common::{call_args, corpus, declarations, function_of, functions, lines, Declaration};
use criterion::{Criterion, Throughput};
use polyweave_tests::alloc_count::{measure, Counting};
use polyweave_tool_adapter::json::schema::Schema;

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The calls that have a function: (index of the declaration, args).
type Pairs<'a> = Vec<(usize, &'a [u8])>;

/// Every pair through [`Schema::validate`]; returns how many are valid.
fn polyweave_pass(schemas: &[Schema<'_>], pairs: &[(usize, &[u8])]) -> usize {
    pairs
        .iter()
        .filter(|(f, args)| schemas[*f].validate(black_box(args)).is_ok())
        .count()
}

/// Every pair through `serde_json::from_slice` and `jsonschema`; returns how many are valid.
fn jsonschema_pass(validators: &[jsonschema::Validator], pairs: &[(usize, &[u8])]) -> usize {
    pairs
        .iter()
        .filter(|(f, args)| {
            let value: serde_json::Value = serde_json::from_slice(black_box(args)).unwrap();
            validators[*f].validate(&value).is_ok()
        })
        .count()
}

/// Every schema sized and indexed ([`Schema::index_words`], [`Schema::indexed`]) into one
/// reused buffer; returns the words written in all.
fn index_pass(schemas: &[Schema<'_>], words: &mut [u32]) -> usize {
    schemas
        .iter()
        .map(|s| {
            let n = black_box(s).index_words().unwrap();
            black_box(s.indexed(&mut words[..n]).unwrap().is_indexed());
            n
        })
        .sum()
}

/// Every declaration's schema read by [`Schema::new`]; returns how many are accepted.
fn new_pass(declarations: &[Declaration<'_>]) -> usize {
    declarations
        .iter()
        .filter(|d| Schema::new(black_box(d.schema)).is_ok())
        .count()
}

struct Inputs<'a> {
    declarations: Vec<Declaration<'a>>,
    schemas: Vec<Schema<'a>>,
    /// The same schemas, each with its index ([`Schema::indexed`]).
    indexed: Vec<Schema<'a>>,
    validators: Vec<jsonschema::Validator>,
    pairs: Pairs<'a>,
    args_bytes: usize,
    schema_bytes: usize,
}

impl<'a> Inputs<'a> {
    fn new(calls: &'a [u8], functions: &'a [u8]) -> Self {
        let declarations = declarations(functions);
        let lines = lines(calls);
        let pairs: Pairs<'a> = function_of(&lines, &declarations)
            .into_iter()
            .zip(&lines)
            .filter_map(|(f, line)| Some((f?, call_args(line))))
            .collect();
        let schemas: Vec<Schema<'a>> = declarations
            .iter()
            .map(|d| Schema::new(d.schema).unwrap_or_else(|e| panic!("{} {}: {e}", d.id, d.name)))
            .collect();
        let indexed = schemas
            .iter()
            .map(|s: &Schema<'a>| {
                let words = s.index_words().expect("indexable");
                // The bench's index memory lives as long as the process, as a static would.
                s.indexed(Box::leak(vec![0u32; words].into_boxed_slice()))
                    .expect("sized by index_words")
            })
            .collect();
        let validators = declarations
            .iter()
            .map(|d| {
                let schema: serde_json::Value = serde_json::from_slice(d.schema).unwrap();
                jsonschema::validator_for(&schema)
                    .unwrap_or_else(|e| panic!("{} {}: {e}", d.id, d.name))
            })
            .collect();
        Self {
            args_bytes: pairs.iter().map(|(_, a)| a.len()).sum(),
            schema_bytes: declarations.iter().map(|d| d.schema.len()).sum(),
            declarations,
            schemas,
            indexed,
            validators,
            pairs,
        }
    }

    /// The numbers only mean something if both validators answer alike, and the counts are
    /// the issue's: 2,935 pairs, 2,932 valid.
    fn verify(&self) {
        assert_eq!(self.declarations.len(), 2452);
        assert_eq!(self.pairs.len(), 2935);
        for (f, args) in &self.pairs {
            let ours = self.schemas[*f].validate(args);
            assert_eq!(self.indexed[*f].validate(args), ours, "indexed");
            let value: serde_json::Value = serde_json::from_slice(args).unwrap();
            let theirs = self.validators[*f].validate(&value);
            assert_eq!(
                ours.is_ok(),
                theirs.is_ok(),
                "{} on {}: polyweave {ours:?}, jsonschema {theirs:?}",
                self.declarations[*f].name,
                String::from_utf8_lossy(args)
            );
        }
        let (valid, allocs, frees) = measure(|| polyweave_pass(&self.schemas, &self.pairs));
        assert_eq!((valid, allocs, frees), (2932, 0, 0));
        let indexed = measure(|| polyweave_pass(&self.indexed, &self.pairs));
        assert_eq!(indexed, (2932, 0, 0));
        let (valid_js, allocs_js, frees_js) =
            measure(|| jsonschema_pass(&self.validators, &self.pairs));
        assert_eq!(valid_js, 2932);
        let (accepted, new_allocs, _) = measure(|| new_pass(&self.declarations));
        assert_eq!((accepted, new_allocs), (2452, 0));
        let (_, compile_allocs, _) = measure(|| {
            for d in &self.declarations {
                let schema: serde_json::Value = serde_json::from_slice(d.schema).unwrap();
                black_box(jsonschema::validator_for(&schema).unwrap());
            }
        });
        eprintln!(
            "schema bench: {} pairs over {} declarations, {} bytes of args ({} of schemas); \
             {valid} valid by both; allocations a pass: polyweave 0, jsonschema {allocs_js} \
             ({frees_js} frees, {:.1} a call); Schema::new 0, jsonschema's compile {compile_allocs}",
            self.pairs.len(),
            self.declarations.len(),
            self.args_bytes,
            self.schema_bytes,
            allocs_js as f64 / self.pairs.len() as f64,
        );
    }
}

fn bench(c: &mut Criterion, inputs: &Inputs<'_>) {
    let mut group = c.benchmark_group("bfcl_args");
    group.throughput(Throughput::Bytes(inputs.args_bytes as u64));
    group.bench_function("polyweave", |b| {
        b.iter(|| polyweave_pass(&inputs.schemas, &inputs.pairs))
    });
    group.bench_function("polyweave_indexed", |b| {
        b.iter(|| polyweave_pass(&inputs.indexed, &inputs.pairs))
    });
    group.bench_function("jsonschema", |b| {
        b.iter(|| jsonschema_pass(&inputs.validators, &inputs.pairs))
    });
    group.finish();

    let mut group = c.benchmark_group("schema_new");
    group.throughput(Throughput::Elements(inputs.declarations.len() as u64));
    group.bench_function("polyweave", |b| b.iter(|| new_pass(&inputs.declarations)));
    group.finish();
}

/// Runs one workload `iters` times with no criterion machinery (for callgrind / perf).
#[inline(never)]
fn run_once(name: &str, iters: usize, inputs: &Inputs<'_>) {
    let (sink, bytes): (usize, usize) = match name {
        "schema_validate" => (
            (0..iters)
                .map(|_| polyweave_pass(&inputs.schemas, &inputs.pairs))
                .sum(),
            inputs.args_bytes,
        ),
        "schema_validate_indexed" => (
            (0..iters)
                .map(|_| polyweave_pass(&inputs.indexed, &inputs.pairs))
                .sum(),
            inputs.args_bytes,
        ),
        "jsonschema_validate" => (
            (0..iters)
                .map(|_| jsonschema_pass(&inputs.validators, &inputs.pairs))
                .sum(),
            inputs.args_bytes,
        ),
        "schema_new" => (
            (0..iters).map(|_| new_pass(&inputs.declarations)).sum(),
            inputs.schema_bytes,
        ),
        "schema_index" => {
            let mut words = vec![0u32; 4096];
            (
                (0..iters)
                    .map(|_| index_pass(&inputs.schemas, &mut words))
                    .sum(),
                inputs.schema_bytes,
            )
        }
        other => panic!("unknown POLYWEAVE_BENCH_ONCE workload {other:?}"),
    };
    println!(
        "{name} x{iters}: {} ({bytes} bytes a pass)",
        black_box(sink)
    );
}

fn main() {
    let (calls, functions) = (corpus(), functions());
    let inputs = Inputs::new(&calls, &functions);
    inputs.verify();
    if let Ok(name) = std::env::var("POLYWEAVE_BENCH_ONCE") {
        let iters = std::env::var("POLYWEAVE_BENCH_ITERS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        run_once(&name, iters, &inputs);
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, &inputs);
    c.final_summary();
}
