use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    cuda_sobel::trace::start();
    let cli = cuda_sobel::cli::Cli::parse();
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
