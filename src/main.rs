use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cuda_sobel::cli::Cli::parse();
    match cuda_sobel::cli::run(cli) {
        Ok(code) => code,
        Err(e) => {
            // One line: the file and the problem, with its causes joined by ": ".
            eprintln!("cuda_sobel: {e:#}");
            ExitCode::from(2)
        }
    }
}
