//! `gpu-doctor rule CODE` prints a rule's documentation; `gpu-doctor rule --all` lists every
//! rule. The documentation lives next to each rule (`gpu-doctor-rules`), so it cannot drift
//! from what the rule does.

use crate::commands::Context;
use crate::exit::{ExitStatus, Hinted};
use crate::printer::Style;
use clap::Args;
use gpu_doctor_model::SCHEMA_VERSION;
use gpu_doctor_rules::registry::{self, RuleDoc};
use std::io::Write;

#[derive(Debug, Args)]
pub struct RuleArgs {
    /// The rule's code (e.g. GD501) or name (e.g. oom-fragmentation).
    #[arg(value_name = "CODE", required_unless_present = "all")]
    pub code: Option<String>,
    /// List every rule: code, name and summary.
    #[arg(long, conflicts_with = "code")]
    pub all: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

fn to_json(r: &RuleDoc) -> serde_json::Value {
    serde_json::json!({
        "code": r.code,
        "name": r.name,
        "cause": r.cause.map(gpu_doctor_model::Cause::as_str),
        "summary": r.summary,
        "body": r.body,
    })
}

pub fn run(ctx: &Context, args: RuleArgs) -> anyhow::Result<ExitStatus> {
    let style = Style { color: ctx.color };
    let mut out = std::io::stdout().lock();
    if args.all {
        let rules = registry::all();
        if args.json {
            let doc = serde_json::json!({
                "schema_version": SCHEMA_VERSION,
                "rules": rules.iter().map(|r| to_json(r)).collect::<Vec<_>>(),
            });
            serde_json::to_writer_pretty(&mut out, &doc)?;
            writeln!(out)?;
        } else {
            let width = rules.iter().map(|r| r.name.len()).max().unwrap_or(0);
            for r in rules {
                writeln!(
                    out,
                    "{}  {:width$}  {}",
                    style.bold(r.code),
                    r.name,
                    r.summary
                )?;
            }
        }
        return Ok(ExitStatus::Success);
    }
    let code = args.code.unwrap_or_default();
    let Some(rule) = registry::find(&code) else {
        return Err(Hinted::new(
            format!("no rule `{code}`"),
            "`gpu-doctor rule --all` lists every rule",
        ));
    };
    if args.json {
        let mut doc = to_json(rule);
        if let Some(obj) = doc.as_object_mut() {
            obj.insert("schema_version".into(), SCHEMA_VERSION.into());
        }
        serde_json::to_writer_pretty(&mut out, &doc)?;
        writeln!(out)?;
        return Ok(ExitStatus::Success);
    }
    writeln!(
        out,
        "{}",
        style.bold(&format!("# {} ({})", rule.name, rule.code))
    )?;
    writeln!(out)?;
    writeln!(out, "{}", rule.summary)?;
    if let Some(cause) = rule.cause {
        writeln!(out)?;
        writeln!(out, "Cause: {}", style.cyan(cause.as_str()))?;
    }
    writeln!(out)?;
    write!(out, "{}", rule.body)?;
    if !rule.body.ends_with('\n') {
        writeln!(out)?;
    }
    Ok(ExitStatus::Success)
}
