"""A Rust builder's `build` that hands a stored setting on, unchanged, to the place of its name
when it is set decides nothing of its own; and the look-alikes that do. Real repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.lenses import blocking_tests_findings, review_change

# seanmonstar/reqwest ff2381e61e (#1194), "Add http2_adaptive_window and http2_max_frame_size
# from hyper": `build` gains the two branches below (22 -> 24); and 03d1635347 (#2609) the
# `if let Some(send_grease) = h3_send_grease { h3_client_config.send_grease = Some(send_grease); }`
# form, a setting stored in a config struct's field of the bound name.
_CLIENT = """pub struct Config {{
    http2_adaptive_window: bool,
    http2_max_frame_size: Option<u32>,
    h3_send_grease: Option<bool>,
    timeout: Option<u64>,
}}

pub struct ClientBuilder {{
    config: Config,
}}

impl ClientBuilder {{
    pub fn build(self) -> Client {{
        let config = self.config;
        let mut builder = hyper::Client::builder();
        let mut h3_client_config = H3ClientConfig::default();
        if let Some(timeout) = config.timeout {{
            builder.timeout(timeout);
        }}
{added}        Client::new(builder, h3_client_config)
    }}
}}
"""

_HANDED_ON = """        if config.http2_adaptive_window {
            builder.http2_adaptive_window(true);
        }
        if let Some(http2_max_frame_size) = config.http2_max_frame_size {
            builder.http2_max_frame_size(http2_max_frame_size);
        }
        if let Some(send_grease) = config.h3_send_grease {
            h3_client_config.send_grease = Some(send_grease);
        }
"""


def _twice(branch: str) -> str:
    """The branch for two settings: one more branch of the same shape is minor, two block."""
    return "".join(branch.format(name=name) for name in ("http2_max_frame_size", "h3_send_grease"))


@pytest.mark.parametrize(("name", "added", "blocks"), [
    ("handed-on", _HANDED_ON, False),
    # Look-alikes: the value worked out on the way, handed to another name, the flag negated, a
    # second statement, an `else`, a source a call works out.
    ("doubled", _twice("        if let Some({name}) = config.{name} {{\n            builder.{name}({name} * 2);\n        }}\n"), True),
    ("renamed", _twice("        if let Some({name}) = config.{name} {{\n            builder.keep_alive({name});\n        }}\n"), True),
    ("negated", _twice("        if !config.{name}.is_some() {{\n            builder.{name}(true);\n        }}\n"), True),
    ("logged", _twice("        if let Some({name}) = config.{name} {{\n            builder.{name}({name});\n"
                      "            log::debug!(\"set\");\n        }}\n"), True),
    ("otherwise", _twice("        if let Some({name}) = config.{name} {{\n            builder.{name}({name});\n"
                         "        }} else {{\n            builder.{name}(0);\n        }}\n"), True),
    ("computed", _twice("        if let Some({name}) = limit_for(&config) {{\n            builder.{name}({name});\n        }}\n"), True),
])
def test_a_setting_handed_on_to_the_place_of_its_name_is_no_decision(
    tmp_path: Path, name: str, added: str, blocks: bool
) -> None:
    path = "src/async_impl/client.rs"
    base = {"Cargo.toml": '[package]\nname = "client"\nversion = "0.1.0"\n', path: _CLIENT.format(added="")}
    found = blocking_tests_findings(review_change(tmp_path, base, {path: _CLIENT.format(added=added)}))
    assert found == ([("tests/missing-tests", path, 20)] if blocks else []), name
