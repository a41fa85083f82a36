//! Time reading a query log alone: `cargo run --release --example parse_speed -- FILE`.
fn main() {
    let p = std::env::args().nth(1).expect("a log file");
    let t = std::time::Instant::now();
    let log = shardkey::sources::queries::read_query_file(std::path::Path::new(&p)).unwrap();
    let secs = t.elapsed().as_secs_f64();
    let mb = std::fs::metadata(&p).unwrap().len() as f64 / 1e6;
    eprintln!("{} operations kept of {:?} in {secs:.2} s: {:.0} MB/s", log.queries.len(), log.by_namespace, mb / secs);
}
