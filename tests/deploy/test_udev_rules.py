"""deploy/cabinet/udev/60-egm.rules gives each simulated cabinet device (its properties as
``udevadm info`` shows them) its stable name, mode and group, and nothing to an unrelated device
(tests/deploy/udev_rules.py matches them); ``udevadm test`` parses the file without a complaint
when udevadm and a private mount namespace are available; the example terminal.toml uses exactly
the names the rules give."""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.deploy import udev_rules

ROOT = Path(__file__).resolve().parents[2]
UDEV = ROOT / "deploy/cabinet/udev"
RULES = UDEV / "60-egm.rules"
EXAMPLE = UDEV / "60-egm.rules.site-example"


def usb_serial(kernel: str, vendor: str, product: str, serial: str | None, id_path: str,
               driver: str = "ftdi_sio", action: str = "add") -> dict:
    """A USB-serial adapter's tty as ``udevadm info`` shows it: the tty, its usb-serial port,
    the interface, then the USB device carrying idVendor/idProduct/serial."""
    usb_device = {"idVendor": vendor, "idProduct": product, "manufacturer": "x", "product": "adapter"}
    if serial is not None:
        usb_device["serial"] = serial
    return {"ACTION": action, "SUBSYSTEM": "tty", "KERNEL": kernel,
            "ENV": {"ID_BUS": "usb", "ID_PATH": id_path, "ID_VENDOR_ID": vendor, "ID_MODEL_ID": product,
                    **({"ID_SERIAL_SHORT": serial} if serial else {}), "ID_USB_DRIVER": driver},
            "ATTR": {"dev": "188:0"},
            "parents": [{"ATTRS": {"port_number": "0"}}, {"ATTRS": {"bInterfaceNumber": "00"}},
                        {"ATTRS": usb_device}, {"ATTRS": {"idVendor": "1d6b", "idProduct": "0002",
                                                          "serial": "0000:00:14.0"}}]}


def touch_event(kernel: str = "event5", serial: str = "EGMTS0001", touchscreen: bool = True) -> dict:
    return {"ACTION": "add", "SUBSYSTEM": "input", "KERNEL": kernel,
            "ENV": {"ID_INPUT": "1", **({"ID_INPUT_TOUCHSCREEN": "1"} if touchscreen else {"ID_INPUT_KEY": "1"}),
                    "ID_PATH": "pci-0000:00:14.0-usb-0:5:1.0"},
            "parents": [{"ATTRS": {"name": "eGalax Inc. USB TouchController"}},
                        {"ATTRS": {"idVendor": "0eef", "idProduct": "0001", "serial": serial}}]}


CABINET = {
    "bill-validator": usb_serial("ttyUSB0", "0403", "6001", "EGMBV0001", "pci-0000:00:14.0-usb-0:1:1.0"),
    "printer": usb_serial("ttyUSB1", "067b", "2303", "EGMPR0001", "pci-0000:00:14.0-usb-0:2:1.0", "pl2303"),
    "io-board": usb_serial("ttyUSB2", "10c4", "ea60", "EGMIO0001", "pci-0000:00:14.0-usb-0:3:1.0", "cp210x"),
    "shoe": usb_serial("ttyUSB3", "1a86", "7523", None, "pci-0000:00:14.0-usb-0:4:1.0", "ch341"),
    "touch": touch_event(),
}


def _assigned(path: Path, device: dict) -> udev_rules.Result:
    return udev_rules.apply(udev_rules.load(path), device)


@pytest.mark.parametrize("name", sorted(CABINET))
def test_each_cabinet_device_gets_its_stable_name_mode_and_group(name):
    got = _assigned(RULES, CABINET[name])
    assert got.symlinks == [f"egm/{name}"]
    assert (got.mode, got.group, got.owner) == ("0660", "egm", None)
    assert "systemd" in got.tags                    # a .device unit egm-terminal.service waits for


@pytest.mark.parametrize("device", [
    usb_serial("ttyUSB0", "0403", "6001", "A9XYZ123", "pci-0000:00:14.0-usb-0:1:1.0"),   # another FTDI
    usb_serial("ttyUSB3", "1a86", "7523", None, "pci-0000:00:14.0-usb-0:2:1.0", "ch341"),  # shoe adapter, other port
    usb_serial("ttyACM0", "2341", "0043", "EGMBV0001", "pci-0000:00:14.0-usb-0:1:1.0"),   # the serial, other vendor
    usb_serial("ttyUSB0", "0403", "6001", "EGMBV0001", "pci-0000:00:14.0-usb-0:1:1.0", action="remove"),
    touch_event(touchscreen=False),                                                       # a keyboard's events
    touch_event(kernel="mouse0"),                                                         # not the event node
    touch_event(serial="OTHER"),
    {"ACTION": "add", "SUBSYSTEM": "block", "KERNEL": "sda", "ENV": {}, "parents": []},
], ids=["other-ftdi", "shoe-other-port", "other-vendor", "remove", "keyboard", "mouse-node", "other-touch",
        "disk"])
def test_an_unrelated_device_gets_nothing(device):
    got = _assigned(RULES, device)
    assert (got.symlinks, got.mode, got.group) == ([], None, None)


def test_the_site_example_names_a_replaced_validator_and_a_printer_by_port():
    validator = usb_serial("ttyUSB0", "0403", "6001", "A10KX3Q7", "pci-0000:00:14.0-usb-0:1:1.0")
    printer = usb_serial("ttyUSB5", "067b", "2303", None, "pci-0000:00:14.0-usb-0:3:1.0", "pl2303")
    assert _assigned(EXAMPLE, validator).symlinks == ["egm/bill-validator"]
    assert _assigned(EXAMPLE, printer).symlinks == ["egm/printer"]
    assert _assigned(EXAMPLE, CABINET["bill-validator"]).symlinks == []    # the old serial no longer


@pytest.mark.parametrize("breakage", [
    ('SYMLINK+="egm/printer"', 'SYMLNK+="egm/printer"'),
    ('ATTRS{serial}=="EGMIO0001"', 'ATTRS{serial}=="EGMIO0001'),
    ('GOTO="egm_tty"', 'GOTO="egm_ttyy"'),
])
def test_a_broken_rule_file_is_refused(breakage, tmp_path):
    broken = tmp_path / "60-egm.rules"
    broken.write_text(RULES.read_text().replace(*breakage, 1))
    with pytest.raises(udev_rules.RulesError):
        for device in CABINET.values():
            udev_rules.apply(udev_rules.load(broken), device)


def udevadm_complaints(rules: Path, tmp_path: Path) -> list[str]:
    """What ``udevadm test`` says about ``rules`` when it is the only rules file: run in a private
    mount namespace (root) where the rules directories, /etc/group (with a group egm) and
    /run/udev are replaced, on the loopback interface (no device node is made)."""
    tmp_path.mkdir(exist_ok=True)
    rules_dir, empty = tmp_path / "rules", tmp_path / "empty"
    rules_dir.mkdir()
    empty.mkdir()
    shutil.copy(rules, rules_dir / "60-egm.rules")
    group = tmp_path / "group"
    group.write_text("".join(line for line in Path("/etc/group").read_text().splitlines(keepends=True)
                             if not line.startswith("egm:")) + "egm:x:990:\n")
    script = (f"for d in /etc/udev/rules.d /run/udev/rules.d /usr/local/lib/udev/rules.d /usr/lib/udev/rules.d "
              f"/lib/udev/rules.d; do [ -d $d ] && mount --bind {empty} $d; done; "
              f"mount --bind {rules_dir} /etc/udev/rules.d && mount --bind {group} /etc/group && "
              "mount -t tmpfs tmpfs /run/udev && udevadm test --action=add /sys/class/net/lo")
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=60)
    said = (done.stdout + done.stderr).splitlines()
    assert any("Reading rules file: /etc/udev/rules.d/60-egm.rules" in line for line in said), "\n".join(said)
    return [line for line in said if "60-egm.rules:" in line]


def _udevadm_usable() -> str | None:
    if shutil.which("udevadm") is None:
        return "udevadm (Debian package udev) is not installed"
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return "udevadm test needs root and unshare for a private mount namespace"
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        return "no private mount namespace here (unshare -m failed)"
    if not Path("/sys/class/net/lo").exists():
        return "no /sys/class/net/lo to run udevadm test on"
    return None


@pytest.mark.skipif(_udevadm_usable() is not None, reason=str(_udevadm_usable()))
@pytest.mark.parametrize("path", [RULES, EXAMPLE], ids=["rules", "site-example"])
def test_udevadm_parses_the_rules_without_a_complaint(path, tmp_path):
    assert udevadm_complaints(path, tmp_path) == []


@pytest.mark.skipif(_udevadm_usable() is not None, reason=str(_udevadm_usable()))
def test_udevadm_complains_about_a_broken_rule(tmp_path):
    broken = tmp_path / "broken.rules"
    broken.write_text(RULES.read_text().replace('SYMLINK+="egm/printer"', 'SYMLNK+="egm/printer"', 1))
    assert udevadm_complaints(broken, tmp_path / "run") != []


def test_the_example_configuration_uses_the_names_the_rules_give():
    from firmware.commands._common import load_terminal_config
    from firmware.config.schema import DEVICE_FIELDS
    from hal import registry

    path = ROOT / "deploy/cabinet/terminal.toml"
    cfg = load_terminal_config(str(path))
    named = {f"/dev/{udev_rules.apply(udev_rules.load(RULES), d).symlinks[0]}" for d in CABINET.values()}
    used = set()
    for slot, device_class in DEVICE_FIELDS.items():
        spec = registry.parse_spec(device_class, getattr(cfg.devices, slot))
        if spec.backend is None:
            continue
        assert not spec.simulated
        settings = cfg.devices.settings.get(slot, {})
        registry.create(device_class, spec.backend, slot, settings).close()    # the settings are the driver's
        used |= {v for v in settings.values() if isinstance(v, str) and v.startswith("/dev/")}
    commented = {line.split('"')[1] for line in path.read_text().splitlines() if line.startswith("# port =")}
    assert used | commented == named
    assert tomllib.loads(path.read_text())["host"]["pki"] == "/var/lib/egm/pki"
