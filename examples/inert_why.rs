//! Prints why the inert stage does or does not prove a command (debugging).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(command), Some(cwd), Some(home)) = (args.get(1), args.get(2), args.get(3)) else {
        return;
    };
    let env = vouch::shell::ShellEnv {
        home,
        cwd: Some(cwd),
        vars: &[],
    };
    let analysis = vouch::shell::analyze(command, &env, &vouch::shell::Limits::DEFAULT);
    let ctx = vouch::policy::inert::InertContext {
        home,
        protected: &[],
        git_system_config: std::path::Path::new("/etc/gitconfig"),
        files: &vouch::engine::Disk,
    };
    println!(
        "{:?}",
        vouch::policy::inert::judge(command, &analysis, &ctx)
    );
}
