"""The files systemd reads for one unit, in its order (systemd.unit(5): drop-ins)."""

from __future__ import annotations

from hcpscan.model.dropins import applied_parts, unit_of_dropin


def _order(paths, unit="containerd.service", node=None):
    return [p.path for p in applied_parts(paths, unit, node)]


def test_every_conf_of_the_unit_directory_is_read_by_file_name():
    paths = ["/etc/systemd/system/containerd.service.d/proxy.conf",
             "/etc/systemd/system/containerd.service.d/10-limits.conf",
             "/etc/systemd/system/containerd.service.d/notes.txt",
             "/etc/containerd/conf.d/.keepdir"]
    assert _order(paths) == paths[1::-1]


def test_names_sort_across_directories_and_the_higher_precedence_file_wins_a_name():
    paths = ["/usr/lib/systemd/system/containerd.service.d/10-proxy.conf",
             "/etc/systemd/system/containerd.service.d/20-no-proxy.conf",
             "/run/systemd/system/containerd.service.d/10-proxy.conf",
             "/etc/systemd/system/service.d/20-no-proxy.conf",
             "/etc/systemd/system/service.d/30-all.conf"]
    assert _order(paths) == [paths[2], paths[1], paths[4]]


def test_the_unit_file_comes_first_and_other_units_do_not_count():
    paths = ["/etc/systemd/system/kubelet.service.d/10-proxy.conf",
             "/usr/lib/systemd/system/containerd.service",
             "/etc/systemd/system/containerd.service.d/http-proxy.conf",
             "/etc/systemd/system/a-.service.d/x.conf"]
    assert _order(paths) == paths[1:3]
    assert _order(["/etc/systemd/system/a-.service.d/x.conf"], "a-b.service") == [
        "/etc/systemd/system/a-.service.d/x.conf"]


def test_files_of_a_node_dump_make_up_that_nodes_unit_only():
    paths = ["node-a/etc/systemd/system/containerd.service.d/http-proxy.conf",
             "node-b/etc/systemd/system/containerd.service.d/zz.conf"]
    assert _order(paths, node="node-a") == paths[:1]
    assert unit_of_dropin(paths[0]) == "containerd.service"
    assert unit_of_dropin("/etc/systemd/system/service.d/x.conf") == ""


def test_a_drop_in_scanned_by_itself_keeps_its_unit(tmp_path):
    """`hcpscan scan .../containerd.service.d/http-proxy.conf`: the unit is read off the path
    given, as it is when the folder above etc/ is scanned."""
    from tests.rules.harness import scan

    folder = tmp_path / "node" / "etc" / "systemd" / "system" / "containerd.service.d"
    folder.mkdir(parents=True)
    dropin = folder / "http-proxy.conf"
    dropin.write_text('[Service]\nEnvironment=\u201dHTTP_PROXY=http://10.115.27.54:3128"\n')
    for target in (dropin, folder, tmp_path):
        [finding] = scan([target], ["PRX009"]).findings
        assert "systemd ignores" in finding.message and finding.location.line == 2


_TOP_LEVEL = """apiVersion: v1
kind: Secret
metadata:
  name: top-cluster-values
  namespace: fleet
stringData:
  values: |
    cluster:
      proxy:
        https: http://p:3128
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata:
  name: top-md-0
  namespace: fleet
  labels:
    cluster.x-k8s.io/cluster-name: top
spec:
  template:
    spec:
      files:
      - path: /etc/systemd/system/service.d/10-proxy.conf
        content: |
          [Service]
          Environment="HTTPS_PROXY=http://p:3128" "NO_PROXY=.svc"
"""


def test_prx009_reads_the_type_level_drop_in_and_a_later_reset(tmp_path):
    from tests.rules.harness import scan

    (tmp_path / "a.yaml").write_text(_TOP_LEVEL)
    assert scan([tmp_path], ["PRX009"]).findings == []
    (tmp_path / "a.yaml").write_text(
        _TOP_LEVEL + "      - path: /run/systemd/system/containerd.service.d/zz-reset.conf\n"
        "        content: |\n          [Service]\n          Environment=\n")
    [finding] = scan([tmp_path], ["PRX009"]).findings
    assert finding.message.endswith(
        "writes containerd.service's files /etc/systemd/system/service.d/10-proxy.conf, "
        "/run/systemd/system/containerd.service.d/zz-reset.conf without HTTP_PROXY or HTTPS_PROXY")


def test_a_name_clash_is_won_root_by_root_before_directory_by_directory():
    """systemd's dropin.c lists drop-in directories root by root (/etc before /usr/lib), the
    unit's own before its prefixes' within one root, and reads the first file of a name."""
    clash = ["/usr/lib/systemd/system/a-b.service.d/10.conf",
             "/etc/systemd/system/a-.service.d/10.conf"]
    assert _order(clash, "a-b.service") == clash[1:]
    typed = ["/run/systemd/system/a-b.service.d/10.conf",
             "/etc/systemd/system/service.d/10.conf"]
    assert _order(typed, "a-b.service") == typed[1:]
    same_root = ["/etc/systemd/system/a-.service.d/10.conf",
                 "/etc/systemd/system/a-b.service.d/10.conf"]
    assert _order(same_root, "a-b.service") == same_root[1:]


def test_a_template_drop_in_applies_to_its_instances():
    paths = ["/etc/systemd/system/getty@.service.d/10-proxy.conf",
             "/etc/systemd/system/getty@tty1.service.d/20.conf",
             "/etc/systemd/system/getty@tty2.service.d/30.conf"]
    assert _order(paths, "getty@tty1.service") == paths[:2]
    # a name clash: the instance's own directory over its template's, within one root
    clash = ["/etc/systemd/system/getty@.service.d/10.conf",
             "/etc/systemd/system/getty@tty1.service.d/10.conf",
             "/etc/systemd/system/getty-.service.d/10.conf"]
    assert _order(clash, "getty@tty1.service") == clash[1:2]
    assert _order(clash[::2], "getty@tty1.service") == clash[:1]
    # prefixes are of the name before '@': a dash in the instance makes none
    assert _order(["/etc/systemd/system/kube@a-.service.d/x.conf"], "kube@a-b.service") == []
