# The two set-up commands: `make run` and `make test`. Each creates .venv when it is missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-test

.PHONY: run test browser nats deploy-tools cabinet-tools rauc update-bundle release release-test release-tools bench soak fuzz lint clean venv par-verify par-sheets

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(BIN)/egm run --sim $(ARGS)

test: $(STAMP) browser nats deploy-tools cabinet-tools rauc release-tools
	$(BIN)/python -m pytest -n 2 -m "not soak and not fuzz and not bench and not release" $(ARGS)

# The floor broker cluster's tests (tests/floor) run Debian's nats-server: installed here when missing
# and we are root with apt.
NATS_SERVER ?= /usr/sbin/nats-server
# tests/deploy: systemd-analyze verify (systemd) and the compose file's validation (docker-compose;
# Docker's engine is not needed and not installed: --no-install-recommends)
deploy-tools:
	@if command -v systemd-analyze >/dev/null && { command -v docker-compose >/dev/null || docker compose version >/dev/null 2>&1; }; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing systemd-analyze and docker-compose for tests/deploy"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends systemd docker-compose >/dev/null || \
		echo "apt-get could not install them: parts of tests/deploy will skip"; \
	else \
		echo "no systemd-analyze or docker-compose (and not root with apt-get): parts of tests/deploy will skip"; \
	fi

nats:
	@if [ -x $(NATS_SERVER) ] || command -v nats-server >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing nats-server for the floor broker cluster's tests"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q nats-server >/dev/null || \
		echo "apt-get could not install nats-server: tests/floor will skip"; \
	else \
		echo "no nats-server (and not root with apt-get to install it): tests/floor will skip"; \
	fi

# The lab report's browser test (tests/hil/test_report_browser.py) drives Debian's chromium through
# Playwright (never `playwright install`): installed here when missing and we are root with apt.
CHROMIUM ?= /usr/bin/chromium
browser:
	@if [ -x $(CHROMIUM) ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing chromium for the lab report's browser test"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null || \
		echo "apt-get could not install chromium: tests/hil/test_report_browser.py will skip"; \
	else \
		echo "no $(CHROMIUM) (and not root with apt-get to install it): tests/hil/test_report_browser.py will skip"; \
	fi

# The field update's tests (tests/deploy/test_update.py) make and check bundles with Debian's rauc
# and mksquashfs: installed here when missing and we are root with apt.
rauc:
	@if command -v rauc >/dev/null && command -v mksquashfs >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing rauc and squashfs-tools for the field update's tests"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q rauc squashfs-tools >/dev/null || \
		echo "apt-get could not install rauc: the bundle tests of tests/deploy/test_update.py will skip"; \
	else \
		echo "no rauc (and not root with apt-get to install it): the bundle tests of tests/deploy/test_update.py will skip"; \
	fi

# A signed update bundle of an application tree (docs/update.md):
#   make update-bundle TREE=dir VERSION=1.2.0 SIGNER=x.cert.pem KEY=x.key.pem CA=ca.cert.pem [UPDATE_OUT=dist/egm-terminal-1.2.0.raucb]
UPDATE_OUT ?= dist/egm-terminal-$(VERSION).raucb
update-bundle: $(STAMP) rauc
	@mkdir -p $(dir $(UPDATE_OUT))
	$(BIN)/egm update bundle --tree $(TREE) --version $(VERSION) --signer $(SIGNER) --key $(KEY) --ca $(CA) -o $(UPDATE_OUT)

# The cabinet's files (tests/deploy): systemd-analyze verify (systemd), udevadm test (udev),
# findmnt --verify (util-linux) and the kiosk (cage, which needs xwayland), from Debian: installed here when missing and we are root with apt.
cabinet-tools:
	@missing=""; \
	command -v systemd-analyze >/dev/null || missing="$$missing systemd"; \
	command -v udevadm >/dev/null || missing="$$missing udev"; \
	command -v findmnt >/dev/null || missing="$$missing util-linux"; \
	command -v cage >/dev/null || missing="$$missing cage"; \
	command -v Xwayland >/dev/null || missing="$$missing xwayland"; \
	if [ -z "$$missing" ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing$$missing for the cabinet's tests (tests/deploy)"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing >/dev/null || \
		echo "apt-get could not install$$missing: parts of tests/deploy will skip"; \
	else \
		echo "no$$missing (and not root with apt-get to install it): parts of tests/deploy will skip"; \
	fi

# The signed Debian packages egm-terminal and egm-host in dist/ (docs/release.md). SIGNER: the code
# signer's certificate (its key NAME.key.pem beside it, or SIGNER_KEY=...), CA: the casino CA's
# certificate (CRL=... optional); with neither, a throwaway development PKI in dist/dev-pki.
release: $(STAMP)
	@command -v dpkg-deb >/dev/null || { echo "make release: dpkg-deb is missing (apt-get install dpkg)"; exit 2; }
	SIGNER='$(SIGNER)' SIGNER_KEY='$(SIGNER_KEY)' CA='$(CA)' CRL='$(CRL)' $(BIN)/python -m deploy.release.build $(ARGS)

# The packages installed into a fresh debootstrap root (bookworm, minbase; cached under
# /var/cache/egm-release): egm software verify and 20 rounds there. Root, a few minutes.
release-test: $(STAMP) release-tools
	$(BIN)/python -m pytest -m release -p no:xdist tests/deploy $(ARGS)

# debootstrap and lintian for the release test: installed here when missing and we are root with apt.
release-tools:
	@for tool in debootstrap lintian; do \
		if command -v $$tool >/dev/null || [ -x /usr/sbin/$$tool ]; then :; \
		elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing $$tool for the release test"; \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$tool >/dev/null || \
			echo "apt-get could not install $$tool: tests/deploy will skip what needs it"; \
		else \
			echo "no $$tool (and not root with apt-get to install it): tests/deploy will skip what needs it"; \
		fi; \
	done

bench: $(STAMP)
	$(BIN)/python -m benchmarks $(ARGS)

# 10,000 kill/restart cycles by default (EGM_SOAK_CYCLES=N for fewer; docs/benchmarks.md).
soak: $(STAMP)
	$(BIN)/python -m pytest -m soak -p no:xdist $(ARGS)

fuzz: $(STAMP)
	$(BIN)/python -m pytest -m fuzz -p no:xdist $(ARGS)

# Every exact PAR figure against 10^7 rounds through the kernel (Baccarat War: about 25 minutes on 2 busy cores).
PAR_ROUNDS ?= 10000000
par-verify: $(STAMP)
	$(BIN)/egm par baccarat-war --verify $(PAR_ROUNDS) --seed par-verify
	$(BIN)/egm par baccarat-war --option war_win_pays=even --verify $(PAR_ROUNDS) --seed par-verify
	$(BIN)/egm par baccarat-war --option pool.enabled=true --verify $(PAR_ROUNDS) --seed par-verify
	$(BIN)/egm par blackjack-war --verify $(PAR_ROUNDS) --seed par-verify
	$(BIN)/egm par three-card-poker --verify $(PAR_ROUNDS) --seed par-verify
	$(BIN)/egm par double-super-9 --verify $(PAR_ROUNDS) --seed par-verify
	$(BIN)/egm par holdem-war --verify $(PAR_ROUNDS) --seed par-verify
	$(BIN)/egm par split21-stud --verify $(PAR_ROUNDS) --seed par-verify

# Recompute Hold'em War's exact tie counts (about a minute) and then the PAR sheets shipped for the
# default configuration (firmware/math/sheets).
par-sheets: $(STAMP)
	$(BIN)/python -m firmware.math.holdem_war_tie 8
	$(BIN)/python -m firmware.math.cache 1000000
	$(BIN)/python -m firmware.math.war_pool 200000

# ruff, then the import contracts of pyproject.toml ([tool.importlinter], docs/architecture.md).
lint: $(STAMP)
	$(BIN)/ruff check firmware hal drivers sim_hardware host egmproto tests
	$(BIN)/lint-imports
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .import_linter_cache build *.egg-info
