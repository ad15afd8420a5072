//! `device-destroy`: formatting, wiping, discarding or overwriting a block
//! device, and rewriting its partition table. A regular file (a disk image)
//! is not a device, and read-only uses of the disk tools are not writes.

use crate::shell::RedirectOp;
use crate::shell::spec::Role;

use super::facts::Facts;
use super::paths::may_be_block_device;
use super::{Category, HardDeny, deny};

fn formatter(name: &str) -> bool {
    name == "mkfs"
        || name.starts_with("mkfs.")
        || matches!(
            name,
            "mke2fs" | "mkswap" | "mkdosfs" | "mkntfs" | "newfs" | "newfs_apfs" | "newfs_hfs"
        )
}

pub(super) fn check(f: &mut Facts<'_>) -> Option<HardDeny> {
    for i in 0..f.analysis.commands.len() {
        let Some(cmd) = f.command(i) else { continue };
        let name = cmd.name().unwrap_or("").to_owned();
        let redirected: Vec<crate::shell::Value> = cmd
            .redirects
            .iter()
            .filter(|r| {
                r.op.writes() && r.op != RedirectOp::ReadWrite || r.op == RedirectOp::ReadWrite
            })
            .map(|r| r.target.clone())
            .collect();
        for touch in f.touches(i).iter() {
            if touch.role != Role::Write {
                continue;
            }
            for target in &touch.targets {
                let Some(device) = may_be_block_device(target) else {
                    continue;
                };
                let (rule, what) = if redirected.contains(&touch.value) {
                    (
                        "device-destroy/redirect-to-device",
                        "a redirection overwrites",
                    )
                } else if formatter(&name) {
                    ("device-destroy/mkfs", "formats")
                } else if name == "wipefs" {
                    ("device-destroy/wipefs", "wipes the signatures of")
                } else if name == "blkdiscard" {
                    ("device-destroy/blkdiscard", "discards every block of")
                } else if crate::shell::spec::PARTITIONERS.contains(&name.as_str()) {
                    (
                        "device-destroy/partition-table",
                        "rewrites the partition table of",
                    )
                } else if name == "dd" {
                    ("device-destroy/dd-to-device", "`dd` overwrites")
                } else if name == "shred" {
                    ("device-destroy/shred-device", "`shred` overwrites")
                } else {
                    ("device-destroy/write-to-device", "overwrites")
                };
                return deny(
                    Category::DeviceDestroy,
                    rule,
                    format!("{what} the block device `{device}` (`{name}`)"),
                );
            }
        }
    }
    None
}
