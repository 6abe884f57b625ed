#!/bin/sh
# The evaluation floor's one-shot set-up (deploy/compose/compose.yaml, service "pki"); idempotent.
# /pki/ca: the site CA and the host's and brokers' certificates (an evaluation floor keeps them in one
# volume; a real floor does not: certs/README.md); $PKI/broker/NAME.conf: each node's nats-server
# configuration; /secrets: the database password (for PostgreSQL) and the workers' pgpass;
# /terminal: the simulated cabinet's PKI, enrolled as on site (its key made there, a CSR signed).
set -eu
PKI=${EGM_FLOOR_PKI:-/pki}
SECRETS=${EGM_FLOOR_SECRETS:-/secrets}
TERMINAL=${EGM_FLOOR_TERMINAL:-/terminal}
CA=$PKI/ca
NODES="n1=broker1,n2=broker2,n3=broker3"
if [ ! -f "$CA/ca.cert.pem" ]; then
    egm certs init --dir "$CA" --name "Evaluation Floor CA"
    egm certs issue --dir "$CA" --kind host --name egm-host --dns egm-host --dns host0 --dns host1 --dns localhost
    egm certs issue --dir "$CA" --kind host-kem --name egm-host.kem
    for n in 1 2 3; do
        egm certs issue --dir "$CA" --kind host --name "egm-floor-broker-n$n" --dns "broker$n"
    done
fi
install -d -m 0750 "$PKI/broker"
for n in 1 2 3; do
    egm host broker-config --nodes "$NODES" --node "n$n" --pki "$CA" --cert "egm-floor-broker-n$n" \
        --store "/var/lib/egm-broker/jetstream" --http-bind 0.0.0.0 --out "$PKI/broker/n$n.conf"
done
if [ ! -f "$SECRETS/db-password" ]; then
    umask 022                                  # the postgres image reads it as its own user
    python3 -c 'import secrets; print(secrets.token_urlsafe(24))' > "$SECRETS/db-password"
    umask 077
    printf 'postgres:5432:egm_host:egm:%s\n' "$(cat "$SECRETS/db-password")" > "$SECRETS/pgpass"
fi
if [ ! -f "$TERMINAL/pki/issued/EGM-0001.cert.pem" ]; then
    egm certs request --state-dir "$TERMINAL" --name EGM-0001 --replace
    egm certs sign --dir "$CA" --csr "$TERMINAL/pki/requests/EGM-0001.csr.pem" --kind terminal
    egm certs install --state-dir "$TERMINAL" --cert "$CA/issued/EGM-0001.cert.pem" --ca "$CA/ca.cert.pem" \
        --crl "$CA/crl.pem" --peer "$CA/issued/egm-host.cert.pem" --peer "$CA/issued/egm-host.kem.cert.pem"
fi
egm certs crl --dir "$CA"
echo "floor PKI ready"
