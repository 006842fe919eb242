//! An S3-compatible server on loopback for tests of object-storage session stores: `moto`'s
//! server mode, installed on first use into a virtualenv beside the test CLI.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::cli::{install_dir, run_with_timeout, tail, InstallLock};

/// The moto release the tests run.
pub const MOTO_VERSION: &str = "5.2.5";

/// Names a `moto_server` to use instead of installing one.
pub const MOTO_SERVER_VAR: &str = "BYRE_MOTO_SERVER";

/// A running S3-compatible server on `127.0.0.1`, stopped (by its PID) when dropped.
#[derive(Debug)]
pub struct S3Server {
    child: Child,
    addr: SocketAddr,
}

fn other(what: impl Into<String>) -> io::Error {
    io::Error::other(what.into())
}

/// The `moto_server` program: [`MOTO_SERVER_VAR`], else the one installed in
/// `<install dir>/moto-<version>` (installed now, with `python3 -m venv` and `pip`, when it
/// is missing; blocking, a minute or so the first time).
pub fn moto_server() -> io::Result<PathBuf> {
    if let Some(bin) = std::env::var_os(MOTO_SERVER_VAR).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(bin));
    }
    let root = install_dir().map_err(|e| other(e.to_string()))?;
    let venv = root.join(format!("moto-{MOTO_VERSION}"));
    let bin = venv.join("bin").join("moto_server");
    if bin.is_file() {
        return Ok(bin);
    }
    std::fs::create_dir_all(&root)?;
    let _lock = InstallLock::acquire(&root).map_err(|e| other(e.to_string()))?;
    if bin.is_file() {
        return Ok(bin);
    }
    eprintln!(
        "byre-testkit: installing moto {MOTO_VERSION} into {}",
        venv.display()
    );
    let run = |command: &mut Command, what: &str| -> io::Result<()> {
        let (status, _, stderr) = run_with_timeout(command, Duration::from_secs(600))?;
        if status.success() {
            Ok(())
        } else {
            Err(other(format!(
                "{what} failed ({status}):\n{}",
                tail(&stderr, 20)
            )))
        }
    };
    run(
        Command::new("python3").args(["-m", "venv"]).arg(&venv),
        "python3 -m venv",
    )?;
    run(
        Command::new(venv.join("bin").join("pip"))
            .args(["install", "--quiet", "--disable-pip-version-check"])
            .arg(format!("moto[server]=={MOTO_VERSION}")),
        "pip install moto",
    )?;
    if !bin.is_file() {
        return Err(other(format!(
            "{} is missing after the install",
            bin.display()
        )));
    }
    Ok(bin)
}

impl S3Server {
    /// Starts the server on a free loopback port and waits until it answers.
    pub fn start() -> io::Result<S3Server> {
        let bin = moto_server()?;
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
            .local_addr()?
            .port();
        let child = Command::new(&bin)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| other(format!("starting {}: {e}", bin.display())))?;
        let mut server = S3Server {
            child,
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while server.http("GET", "/").is_err() {
            if let Some(status) = server.child.try_wait()? {
                return Err(other(format!(
                    "{} exited at start ({status})",
                    bin.display()
                )));
            }
            if Instant::now() > deadline {
                return Err(other("the S3 server did not answer within 60 s"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(server)
    }

    /// Its endpoint, `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The environment an S3 client needs for it: the endpoint, plain HTTP allowed, a region
    /// and test credentials (the server takes any).
    pub fn env(&self) -> Vec<(String, String)> {
        [
            ("AWS_ENDPOINT", self.endpoint().as_str()),
            ("AWS_ALLOW_HTTP", "true"),
            ("AWS_REGION", "us-east-1"),
            ("AWS_ACCESS_KEY_ID", "testing"),
            ("AWS_SECRET_ACCESS_KEY", "testing"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
    }

    /// Creates a bucket.
    pub fn create_bucket(&self, name: &str) -> io::Result<()> {
        let status = self.http("PUT", &format!("/{name}"))?;
        if (200..300).contains(&status) {
            Ok(())
        } else {
            Err(other(format!("creating bucket {name}: HTTP {status}")))
        }
    }

    /// Deletes a bucket (an empty one: S3 refuses to delete a bucket that holds objects).
    pub fn delete_bucket(&self, name: &str) -> io::Result<()> {
        let status = self.http("DELETE", &format!("/{name}"))?;
        if (200..300).contains(&status) {
            Ok(())
        } else {
            Err(other(format!("deleting bucket {name}: HTTP {status}")))
        }
    }

    /// One request without a body; gives the status code.
    fn http(&self, method: &str, path: &str) -> io::Result<u16> {
        let mut stream = TcpStream::connect_timeout(&self.addr, Duration::from_secs(2))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n\
             Content-Length: 0\r\nConnection: close\r\n\r\n",
            addr = self.addr
        )?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer)?;
        let head = String::from_utf8_lossy(&answer[..answer.len().min(64)]).into_owned();
        head.split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .ok_or_else(|| other(format!("not an HTTP answer: {head:?}")))
    }

    /// The server's PID.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
