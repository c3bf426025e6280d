#!/usr/bin/env python3
"""Reads OUT/report.html, or the DOM chromium dumps of it, for the report tests:

    report_dom.py rows DOM                 the per-layer table's body rows: "rows: N"
    report_dom.py loops PAGE               the text of the loop nests' <pre>, unescaped
    report_dom.py self-contained PAGE      no reference out of the page (src, href but #..., url(), @import)
    report_dom.py click PAGE COPY KEY...   COPY: PAGE with a script that clicks the headers KEY... in order
    report_dom.py sorted DOM KEY asc|desc  the rows are in that order of column KEY (as numbers for a
                                           numeric column, cells without a number last), the header says
                                           so (aria-sort), and the check has power: the rows were not in
                                           that order before, and for numbers, text order would differ
"""
import html.parser
import sys


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.heads = []        # per header of #layer-table: its attributes
        self.rows = []         # per body row: (data-i, [data-v of each cell])
        self.refs = []         # every src/href that leaves the page
        self.scripts = []      # every <script>'s attributes
        self.styles = []       # the text of every <style> and style= attribute
        self.loops = None      # the text of <pre class="loops">
        self.in_table = self.in_head = self.in_body = self.in_style = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for name in ("src", "href", "action", "data", "poster", "srcset"):
            if name in a and not (name == "href" and (a[name] or "").startswith("#")):
                self.refs.append("%s=%r on <%s>" % (name, a[name], tag))
        if "style" in a:
            self.styles.append(a["style"] or "")
        if tag == "script":
            self.scripts.append(a)
        if tag == "style":
            self.in_style = True
        if tag == "pre" and a.get("class") == "loops":
            self.loops = ""
        if tag == "table":
            self.in_table = a.get("id") == "layer-table"
        if not self.in_table:
            return
        if tag == "thead":
            self.in_head = True
        elif tag == "tbody":
            self.in_body = True
        elif tag == "th" and self.in_head:
            self.heads.append(a)
        elif tag == "tr" and self.in_body:
            self.rows.append((int(a["data-i"]), []))
        elif tag == "td" and self.in_body:
            self.rows[-1][1].append(a.get("data-v"))

    def handle_endtag(self, tag):
        if tag == "pre" and self.loops is not None and not isinstance(self.loops, tuple):
            self.loops = (self.loops,)   # done
        if tag == "style":
            self.in_style = False
        if tag == "thead":
            self.in_head = False
        elif tag == "tbody":
            self.in_body = False
        elif tag == "table":
            self.in_table = False

    def handle_data(self, data):
        if isinstance(self.loops, str):
            self.loops += data
        if self.in_style:
            self.styles.append(data)


def parse(path):
    p = Page()
    p.feed(open(path, encoding="utf-8").read())
    p.close()
    return p


def fail(msg):
    sys.exit("report_dom.py: " + msg)


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "rows":
        print("rows: %d" % len(parse(path).rows))
    elif cmd == "loops":
        p = parse(path)
        if not isinstance(p.loops, tuple):
            fail("no <pre class=\"loops\"> in " + path)
        sys.stdout.write(p.loops[0])
    elif cmd == "self-contained":
        p = parse(path)
        if p.refs:
            fail("references out of the page: " + "; ".join(p.refs))
        for s in p.styles:
            if "url(" in s or "@import" in s:
                fail("a style loads something: " + s[:80])
        if len(p.scripts) != 1 or p.scripts[0]:
            fail("expected one inline script, found %r" % p.scripts)
        print("self-contained: no reference out of the page, one inline script")
    elif cmd == "click":
        text = open(path, encoding="utf-8").read()
        clicks = "".join("document.querySelector('#layer-table th[data-key=\"%s\"]').click();" % k
                         for k in sys.argv[4:])
        if text.count("</body>") != 1:
            fail("no single </body> in " + path)
        open(sys.argv[3], "w", encoding="utf-8").write(text.replace("</body>", "<script>" + clicks + "</script>\n</body>"))
    elif cmd == "sorted":
        key, order = sys.argv[3], sys.argv[4]
        p = parse(path)
        cols = [h.get("data-key") for h in p.heads]
        if key not in cols:
            fail("no column %r in %r" % (key, cols))
        col, head = cols.index(key), p.heads[cols.index(key)]
        numeric = head.get("data-type") == "num"
        want = "ascending" if order == "asc" else "descending"
        if head.get("aria-sort") != want:
            fail("the header says %r, not %r" % (head.get("aria-sort"), want))
        values = [cells[col] for _, cells in p.rows]
        if numeric:
            present = [float(v) for v in values if v not in (None, "")]
            if values[:len(present)] != [v for v in values if v not in (None, "")]:
                fail("a cell without a number comes before one with: %r" % values)
            expect = sorted(present, reverse=order == "desc")
            if present != expect:
                fail("not in %s numeric order: %r" % (want, values))
            as_text = sorted((v for v in values if v), reverse=order == "desc")
            if as_text == [v for v in values if v]:
                fail("no power: text order of %r is the same as numeric order" % values)
        else:
            if values != sorted(values, reverse=order == "desc"):
                fail("not in %s text order: %r" % (want, values))
        if [i for i, _ in p.rows] == sorted(i for i, _ in p.rows):
            fail("no power: the rows are in network order already")
        print("%d rows sorted by %s, %s, as %s" % (len(values), key, want, "numbers" if numeric else "text"))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
