"""Where each TLS runtime loads the CA certificates it verifies a server with.

One home for which file a client reads (issue 24): a proxy's CA in a mounted ConfigMap is
trusted only by a program that reads the path it is mounted at. Each entry below is what
the runtime's own documentation or source says, for a container on Linux:

* ``go`` (crypto/x509, root_linux.go): ``SSL_CERT_FILE`` replaces the list of bundle
  files (else the first of the distribution files that exists), ``SSL_CERT_DIR``
  (colon-separated) replaces the directories, every file of which is read;
* ``openssl`` (Python's ``ssl``/urllib, Ruby's net/http, wget, anything linked with
  OpenSSL that calls ``SSL_CTX_set_default_verify_paths``): ``SSL_CERT_FILE`` replaces
  the default file, ``SSL_CERT_DIR`` the default directory, in which OpenSSL looks up
  only hashed names (``<subject hash>.0``, what ``c_rehash`` writes), never other files;
* ``curl`` (the curl tool): ``CURL_CA_BUNDLE``, else ``SSL_CERT_FILE``, else
  ``SSL_CERT_DIR`` (only when no file variable is set, curl issue 11325), else the
  bundle it was built with; its default capath is hashed-name lookup like OpenSSL's;
* ``requests`` (Python): ``REQUESTS_CA_BUNDLE``, else ``CURL_CA_BUNDLE``, else certifi's
  own ``cacert.pem`` inside the package, which no system path replaces;
* ``node``: its built-in Mozilla roots plus ``NODE_EXTRA_CA_CERTS`` (one PEM file); the
  system store only with ``--use-openssl-ca`` (then OpenSSL's variables and paths);
* ``java``: the keystore named by ``-Djavax.net.ssl.trustStore`` (in ``JAVA_TOOL_OPTIONS``,
  ``JDK_JAVA_OPTIONS``, ``JAVA_OPTS`` or the command), else the JDK's ``cacerts``; a
  keystore is not PEM and hcpscan does not compare it. Eclipse Temurin images with
  ``USE_SYSTEM_CA_CERTS`` set import every ``/certificates/*.crt`` at start-up.

The distribution bundle files are those of RHEL/UBI/Fedora
(``/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem``, linked as
``/etc/pki/tls/certs/ca-bundle.crt`` and ``/etc/pki/tls/cert.pem``), Debian/Ubuntu
(``/etc/ssl/certs/ca-certificates.crt``, linked from ``/usr/lib/ssl/cert.pem``) and Alpine
(``/etc/ssl/cert.pem``, ``/etc/ssl/certs/ca-certificates.crt``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Go's crypto/x509 on Linux (root_linux.go): the first of these files that exists, and every
# file of these directories, unless SSL_CERT_FILE / SSL_CERT_DIR say otherwise.
GO_CERT_FILES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
                 "/etc/ssl/ca-bundle.pem", "/etc/pki/tls/cacert.pem",
                 "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/cert.pem")
GO_CERT_DIRS = ("/etc/ssl/certs", "/etc/pki/tls/certs")

# The file and directory OpenSSL's default verify paths resolve to on each distribution,
# with the files those names link to (a bundle mounted over the link target is read). RHEL's
# /etc/pki/tls/certs/ca-bundle.crt is not one: it is another link to tls-ca-bundle.pem, which
# curl and Go read but OpenSSL's cert.pem does not lead to.
OPENSSL_FILES = ("/etc/pki/tls/cert.pem", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
                 "/usr/lib/ssl/cert.pem", "/etc/ssl/certs/ca-certificates.crt",
                 "/etc/ssl/cert.pem")
OPENSSL_DIRS = ("/etc/pki/tls/certs", "/usr/lib/ssl/certs", "/etc/ssl/certs")
# The bundle curl is built with (Debian/Alpine, RHEL) and its default capath.
CURL_FILES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
              "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/cert.pem")
CURL_DIRS = ("/etc/ssl/certs",)

# OpenSSL's lookup in a CA directory: <8 hex digits of the subject hash>.<n>
HASHED_NAME = re.compile(r"^[0-9a-f]{8}\.\d+$")

JAVA_OPTION_VARIABLES = ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "JAVA_OPTS")
JAVA_TRUSTSTORE = re.compile(r"-Djavax\.net\.ssl\.trustStore=(\S+)")
TEMURIN_SYSTEM_CAS = ("USE_SYSTEM_CA_CERTS", "/certificates")
# The JDK's own keystore: <java.home>/lib/security/cacerts (JDK 8: jre/lib/security/cacerts),
# and the distribution files it links to; a keystore mounted there is what the JVM reads.
JAVA_CACERTS_SUFFIX = "/lib/security/cacerts"
JAVA_SYSTEM_KEYSTORES = ("/etc/pki/ca-trust/extracted/java/cacerts", "/etc/ssl/certs/java/cacerts")


@dataclass(frozen=True, slots=True)
class TrustStore:
    """How one runtime finds its CA files."""

    runtime: str
    file_vars: tuple[str, ...]  # variables naming the bundle file, the first set one wins
    dir_vars: tuple[str, ...]  # variables naming CA directories (colon-separated)
    default_files: tuple[str, ...]  # read when no file variable is set
    default_dirs: tuple[str, ...]  # read when no directory variable is set
    hashed_dirs: bool = False  # only <hash>.N names of a directory are looked up
    extra_vars: tuple[str, ...] = ()  # variables naming a file added to the built-in roots
    dirs_only_without_file: bool = False  # curl: SSL_CERT_DIR only when no file variable
    defaults_in_image: str = ""  # what it reads by default when that is no system path
    summary: str = ""


STORES: dict[str, TrustStore] = {
    "go": TrustStore("go", ("SSL_CERT_FILE",), ("SSL_CERT_DIR",), GO_CERT_FILES, GO_CERT_DIRS,
                     summary="Go reads SSL_CERT_FILE (else the distribution bundle) and every "
                             "file of SSL_CERT_DIR (else /etc/ssl/certs, /etc/pki/tls/certs)"),
    "openssl": TrustStore("openssl", ("SSL_CERT_FILE",), ("SSL_CERT_DIR",), OPENSSL_FILES,
                          OPENSSL_DIRS, hashed_dirs=True,
                          summary="OpenSSL reads SSL_CERT_FILE (else its default cert.pem) and "
                                  "the hashed names of SSL_CERT_DIR (else its certs directory)"),
    "curl": TrustStore("curl", ("CURL_CA_BUNDLE", "SSL_CERT_FILE"), ("SSL_CERT_DIR",), CURL_FILES,
                       CURL_DIRS, hashed_dirs=True, dirs_only_without_file=True,
                       summary="curl reads CURL_CA_BUNDLE, else SSL_CERT_FILE, else "
                               "SSL_CERT_DIR, else the bundle it was built with"),
    "requests": TrustStore("requests", ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"), (), (), (),
                           defaults_in_image="certifi's cacert.pem inside the package",
                           summary="Python requests reads REQUESTS_CA_BUNDLE, else "
                                   "CURL_CA_BUNDLE, else certifi's own bundle"),
    "node": TrustStore("node", (), (), (), (), extra_vars=("NODE_EXTRA_CA_CERTS",),
                       defaults_in_image="the Mozilla roots built into node",
                       summary="Node.js reads its built-in roots and NODE_EXTRA_CA_CERTS"),
    "java": TrustStore("java", (), (), (), (),
                       defaults_in_image="the JDK's cacerts keystore",
                       summary="Java reads -Djavax.net.ssl.trustStore, else the JDK's cacerts"),
}

# The trust stores each client of hcpscan.model.readers.IMAGE_CLIENTS (which client an image
# runs) may load from: a Python program uses the ssl module or requests. Node.js images name no
# client release the NO_PROXY models know (their tag is Node's), so they are told here alone.
CLIENT_TRUST_STORES: dict[str, tuple[str, ...]] = {
    "go": ("go",), "curl": ("curl",), "ruby": ("openssl",), "python": ("openssl", "requests"),
    "java": ("java",),
}
NODE_IMAGES = ("node",)
# Node.js flags that make it read OpenSSL's store (NODE_OPTIONS or the command).
NODE_SYSTEM_STORE_FLAGS = ("--use-openssl-ca", "--use-system-ca")
# What a program whose runtime the input does not say may be: any of these.
ANY_RUNTIME = ("go", "openssl", "curl", "requests", "node", "java")


# -- the distribution an image is built on ---------------------------------------------------
#
# The default paths above are the union over distributions: right only when the image's
# distribution is not known. Where the image says it, each runtime reads that distribution's
# files alone:
#
# * RHEL/UBI/Fedora/CentOS: the extracted bundle /etc/pki/ca-trust/extracted/pem/
#   tls-ca-bundle.pem, linked as /etc/pki/tls/certs/ca-bundle.crt and /etc/pki/tls/cert.pem
#   (/etc/ssl/certs links to /etc/pki/tls/certs). OpenSSL's OPENSSLDIR is /etc/pki/tls
#   (cert.pem, hashed names of certs/); curl is built with /etc/pki/tls/certs/ca-bundle.crt.
# * Debian/Ubuntu (and distroless, built from Debian packages): /etc/ssl/certs/
#   ca-certificates.crt and the hashed links of /etc/ssl/certs. OpenSSL's OPENSSLDIR is
#   /usr/lib/ssl: certs/ links to /etc/ssl/certs (hashed names only), and its default file
#   /usr/lib/ssl/cert.pem is a link to ca-certificates.crt that Debian 12's openssl package
#   ships (3.0.x; ca-certificates depends on openssl, so every image with the bundle has
#   it). Older images without that link read only the hashed names; taking the link as
#   there never reports a container that loads the bundle (no false finding), at the cost
#   of passing such an old image. curl is built with /etc/ssl/certs/ca-certificates.crt and
#   capath /etc/ssl/certs.
# * Alpine: /etc/ssl/certs/ca-certificates.crt, linked as /etc/ssl/cert.pem; OpenSSL's
#   OPENSSLDIR is /etc/ssl (cert.pem, certs/); curl is built with the bundle.
#
# Go reads the first file of GO_CERT_FILES that exists - the distribution's own, or an
# earlier one a mount creates - and what it links to.

_RHEL_BUNDLE = "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem"
_DEBIAN_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


@dataclass(frozen=True, slots=True)
class Distribution:
    """The CA files one distribution ships and where its runtimes look for them."""

    name: str
    present: dict[str, str]  # bundle files in the image -> the file each is (or links to)
    dir_links: dict[str, str]  # CA directories that are links -> the directory they are
    defaults: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]  # runtime -> (files, dirs)


DISTRIBUTIONS: dict[str, Distribution] = {
    "rhel": Distribution(
        "rhel",
        {"/etc/pki/tls/certs/ca-bundle.crt": _RHEL_BUNDLE, "/etc/pki/tls/cert.pem": _RHEL_BUNDLE,
         _RHEL_BUNDLE: _RHEL_BUNDLE},
        {"/etc/ssl/certs": "/etc/pki/tls/certs"},
        {"openssl": (("/etc/pki/tls/cert.pem", _RHEL_BUNDLE), ("/etc/pki/tls/certs",)),
         "curl": (("/etc/pki/tls/certs/ca-bundle.crt", _RHEL_BUNDLE), ())}),
    "debian": Distribution(
        "debian",
        {_DEBIAN_BUNDLE: _DEBIAN_BUNDLE, "/usr/lib/ssl/cert.pem": _DEBIAN_BUNDLE},
        {"/usr/lib/ssl/certs": "/etc/ssl/certs"},
        {"openssl": (("/usr/lib/ssl/cert.pem", _DEBIAN_BUNDLE),
                     ("/usr/lib/ssl/certs", "/etc/ssl/certs")),
         "curl": ((_DEBIAN_BUNDLE,), ("/etc/ssl/certs",))}),
    "alpine": Distribution(
        "alpine",
        {_DEBIAN_BUNDLE: _DEBIAN_BUNDLE, "/etc/ssl/cert.pem": _DEBIAN_BUNDLE},
        {},
        {"openssl": (("/etc/ssl/cert.pem", _DEBIAN_BUNDLE), ("/etc/ssl/certs",)),
         "curl": ((_DEBIAN_BUNDLE,), ())}),
}
DISTRIBUTION_NAMES = {"rhel": "RHEL/UBI", "debian": "Debian/Ubuntu", "alpine": "Alpine"}

# What an image reference says of its distribution: checked in this order, on the
# repository path (registry and namespaces included) and on the tag.
_ALPINE = re.compile(r"(^|[/:._-])alpine([0-9._:/-]|$)")
_RHEL_PATH = ("registry.access.redhat.com/", "registry.redhat.io/", "quay.io/openshift-release-dev/",
              "quay.io/openshift/", "quay.io/hypershift/", "quay.io/centos/", "quay.io/fedora/",
              "registry.fedoraproject.org/")
_RHEL_WORD = re.compile(r"(^|[/:._-])(ubi[0-9]*|rhel[0-9]*|centos|fedora|rockylinux|almalinux)"
                        r"([0-9._:/-]|$)")
_DEBIAN_WORD = re.compile(r"(^|[/:._-])(debian|ubuntu|slim|bookworm|bullseye|buster|trixie|jammy|"
                          r"noble|focal|distroless)([0-9._:/-]|$)")
# Docker's official language images whose tag without a variant is Debian (python, golang,
# ruby, node) or Ubuntu (eclipse-temurin).
_DEBIAN_DEFAULT = ("python", "golang", "ruby", "node", "eclipse-temurin")


def image_distribution(image: str) -> tuple[str, str]:
    """(distribution, why) that an image reference says, or ('', why it does not)."""
    ref = (image or "").split("@", 1)[0].strip().lower()
    if not ref:
        return "", "the container names no image"
    if _ALPINE.search(ref):
        return "alpine", f"its image {ref} is Alpine-based"
    if ref.startswith(_RHEL_PATH) or _RHEL_WORD.search(ref):
        return "rhel", f"its image {ref} is RHEL/UBI-based"
    if ref.startswith("gcr.io/distroless/") or _DEBIAN_WORD.search(ref):
        return "debian", f"its image {ref} is Debian/Ubuntu-based"
    path = ref.rsplit(":", 1)[0] if ":" in ref.rsplit("/", 1)[-1] else ref
    official = path.removeprefix("docker.io/").removeprefix("library/")
    if official in _DEBIAN_DEFAULT:
        return "debian", (f"its image {ref} is Docker's official {official} image, Debian/"
                          "Ubuntu-based unless its tag names another variant")
    return "", (f"its image {ref} does not say its distribution: the bundle files of "
                "RHEL/UBI, Debian/Ubuntu and Alpine are all counted")


def go_first_file(distribution: Distribution, mounted: set[str]) -> tuple[str, str] | None:
    """(the file Go reads, the file that is) on this distribution, when ``mounted`` paths
    exist besides the distribution's own files: the first of GO_CERT_FILES that exists."""
    for path in GO_CERT_FILES:
        if path in mounted:
            return path, path
        if path in distribution.present:
            return path, distribution.present[path]
    return None
