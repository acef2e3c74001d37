"""Packaging: the systemd unit in deploy/ is one systemd accepts, and hardened (its own
user, a read-only system, no privileges: systemd's exposure score at most 2.0 of 10)."""
import os
import subprocess

from conftest import HERALD, ROOT


def unit_with_this_binary(tmp_path):
    """deploy/herald.service with its ExecStart pointing at the binary under test (systemd
    checks that the program exists)."""
    with open(os.path.join(ROOT, "deploy", "herald.service")) as f:
        text = f.read()
    assert "ExecStart=/usr/local/bin/herald serve" in text
    path = tmp_path / "herald.service"
    path.write_text(text.replace("/usr/local/bin/herald", HERALD))
    return path


def test_systemd_accepts_the_unit_without_a_warning(tmp_path):
    result = subprocess.run(["systemd-analyze", "verify", str(unit_with_this_binary(tmp_path))],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stderr.strip() == "", result.stderr


def test_the_unit_runs_as_its_own_user_on_a_read_only_system_with_descriptors_and_restarts(tmp_path):
    text = unit_with_this_binary(tmp_path).read_text()
    for line in ("User=herald", "ProtectSystem=strict", "NoNewPrivileges=yes", "LimitNOFILE=1048576",
                 "Restart=on-failure", "StateDirectory=herald", "CapabilityBoundingSet="):
        assert f"\n{line}\n" in text, line
    result = subprocess.run(
        ["systemd-analyze", "security", "--offline=true", "--threshold=20", str(tmp_path / "herald.service")],
        capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout[-2000:]
    assert "Overall exposure level for herald.service: 1." in result.stdout
