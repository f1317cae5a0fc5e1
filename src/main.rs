use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    cuda_sobel::trace::start();
    let cli = cuda_sobel::cli::Cli::parse();
    // Before any CUDA call, on this one thread: the driver starts only the devices the command uses.
    if let Some(devices) = cli.devices() {
        cuda_sobel::gpu::visible::show_only(&devices);
    }
    match cuda_sobel::cli::run(cli) {
        Ok(code) => {
            cuda_sobel::trace::mark("main returns");
            code
        }
        Err(e) => {
            // One line: the file and the problem, with its causes joined by ": ".
            eprintln!("cuda_sobel: {e:#}");
            ExitCode::from(2)
        }
    }
}
