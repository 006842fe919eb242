//! Start-up latency against the real CLI, offline: how long `Claude::start` takes (launch and
//! `initialize` answered), and the first turn after it, against taking a session from a warm
//! `Pool`. Plain timing (no criterion): the CLI's start-up is what is measured, and it is
//! slow enough that a handful of runs give a stable median.

use std::time::{Duration, Instant};

use byre_proto::CliMessage;
use byre_session::{Claude, Event, Events, Options, Pool};
use byre_testkit::{ClaudeEnv, FakeModel, Match, Reply, Rule, Script};
use futures::StreamExt;

const RUNS: usize = 7;

fn options(model: &FakeModel) -> (Options, ClaudeEnv) {
    let env = ClaudeEnv::new(&model.base_url()).expect("an offline environment");
    let options = env.options().expect("the pinned CLI");
    (options, env)
}

async fn first_turn(claude: &Claude, events: &mut Events) {
    claude.send("hello").expect("sent");
    while let Some(event) = events.next().await {
        if let Event::Message(CliMessage::Result(_)) = event {
            return;
        }
    }
    panic!("the session ended before its result");
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let script = Script::new()
            .rule(Rule::when(Match::user_text_contains("hello")).reply(Reply::text("Hi.")));
        let model = FakeModel::start(script).await.expect("the fake model");
        let (options, _env) = options(&model);

        let (mut started, mut answered) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            let t = Instant::now();
            let (claude, mut events) = Claude::start(options.clone()).await.expect("starts");
            started.push(t.elapsed());
            first_turn(&claude, &mut events).await;
            answered.push(t.elapsed());
            claude.close().await.expect("closes");
        }

        let pool = Pool::new(options.clone(), 2).expect("a pool");
        let (mut taken, mut pooled) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            // Warm: wait for the pool to have both sessions ready, as between jobs.
            while pool.waiting() < 2 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let t = Instant::now();
            let (claude, mut events) = pool.take().await.expect("a session");
            taken.push(t.elapsed());
            first_turn(&claude, &mut events).await;
            pooled.push(t.elapsed());
            claude.close().await.expect("closes");
        }
        pool.close().await;

        eprintln!("{RUNS} runs each, medians:");
        eprintln!(
            "Claude::start: started {}, first result {}",
            ms(median(started)),
            ms(median(answered))
        );
        eprintln!(
            "Pool::take (warm pool of 2): taken {}, first result {}",
            ms(median(taken)),
            ms(median(pooled))
        );
    });
}
