//! The least a GPU command can cost on this machine: load the driver, `cuInit`, create the primary context,
//! allocate one byte (the report's dummy `cudaMalloc`), and exit. Time the whole process from outside
//! (`bench/one-image.sh` does, with FLOOR=this binary): the driver's start-up and its teardown at exit
//! (~100 ms without a persistence daemon, measured on the H200 machine) are in every GPU command's wall clock.
fn main() {
    let t = std::time::Instant::now();
    let ctx = cudarc::driver::CudaContext::new(0).expect("a CUDA device");
    let one = ctx.default_stream().alloc_zeros::<u8>(1).expect("one byte");
    eprintln!("context + 1-byte allocation: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    std::mem::forget(one);
    std::mem::forget(ctx);
}
