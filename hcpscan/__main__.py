from hcpscan.cli.main import entry

entry()
