#!/usr/bin/env python3
"""`trace report --xlsx`: each sheet keeps its header row in view (frozen pane), has a filter
over all its columns, sensible column widths, and numbers shown with the table's decimals."""
import os
import re
import tempfile
import zipfile

import harness

t = harness.Test()
trace = t.corpus("traces/TraceLens/h100/gaunernst_bert-small-uncased__1016001.json.gz")
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "report.xlsx")
    t.sextant("trace", "report", trace, "--xlsx", out)
    with zipfile.ZipFile(out) as z:
        sheets = [n for n in z.namelist() if re.match(r"xl/worksheets/sheet\d+\.xml$", n)]
        t.check(len(sheets) >= 5, f"expected one sheet per table, found {sheets}")
        styles = z.read("xl/styles.xml").decode()
        t.check('formatCode="0.000"' in styles, "no three-decimal number format in styles.xml")
        for name in sheets:
            xml = z.read(name).decode()
            t.check('ySplit="1"' in xml and 'state="frozen"' in xml,
                    f"{name}: header row not frozen")
            t.check("<autoFilter ref=" in xml, f"{name}: no autofilter")
            t.check("<cols>" in xml and 'customWidth="1"' in xml, f"{name}: no column widths")
t.passed()
