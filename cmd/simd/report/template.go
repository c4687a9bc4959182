package report

import "html/template"

// tmpl is the page: inline style, no script, nothing loaded from anywhere.
var tmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"num": func(n []bool, i int) bool { return i < len(n) && n[i] },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 64rem; padding: 1rem 1.5rem 3rem; color: #222; background: #fff; }
h1 { font-size: 1.6rem; margin-bottom: 0.5rem; }
h2 { font-size: 1.25rem; margin-top: 2.2rem; border-bottom: 1px solid #ccc; padding-bottom: 0.2rem; }
h3 { font-size: 1.05rem; margin-top: 1.4rem; }
table { border-collapse: collapse; margin: 0.6rem 0; font-size: 0.85rem; }
th, td { padding: 0.2rem 0.6rem; border-bottom: 1px solid #e4e4e4; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.wide { overflow-x: auto; max-width: 100%; }
.note, .skipped { color: #555; font-size: 0.85rem; }
.warn { background: #fff3cd; border: 1px solid #e0c36b; padding: 0.5rem 0.8rem; }
figure { margin: 1rem 0 2rem; }
figcaption { font-weight: 600; margin-bottom: 0.3rem; }
svg.plot { display: block; width: 100%; max-width: 48rem; height: auto; border: 1px solid #eee; }
nav a { margin-right: 0.8rem; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<nav><a href="#run">Run</a>{{if .Jobs}}<a href="#jobs">Jobs</a>{{end}}<a href="#groups">Exposed communication</a><a href="#plots">Plots</a><a href="#links">Links</a>{{if .Compare}}<a href="#compare">Analytical vs event</a>{{end}}<a href="#layers">Layers</a></nav>
{{if .Incomplete}}<p class="warn">Incomplete run: {{.Incomplete}}</p>{{end}}
<h2 id="run">Run</h2>
<table>
{{range .Run}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>
{{end}}</table>
{{with .Missing}}<p class="note">Not in the folder: {{range $i, $m := .}}{{if $i}}, {{end}}{{$m}}{{end}}.</p>{{end}}
{{with .Jobs}}<h2 id="jobs">Jobs</h2>
{{template "table" .}}<p class="note">From jobs.csv: each job's mean iteration with the others on the fabric and alone on the same GPUs, µs; each job's folder has its own report.</p>{{end}}
<h2 id="groups">Exposed communication by group</h2>
{{with .Groups}}{{template "table" .}}<p class="note">From EndToEnd.csv's summary line: the communication time no computation hides, by the group of the collective.</p>{{else}}<p class="note">No EndToEnd.csv.</p>{{end}}
<h2 id="plots">Plots</h2>
{{range .Figures}}<figure id="plot-{{.Name}}">
<figcaption>{{.Title}}</figcaption>
{{.SVG}}
</figure>
{{else}}<p class="note">No plots: the folder has none of their inputs.</p>
{{end}}{{with .Skipped}}<p class="skipped">Skipped: {{range $i, $s := .}}{{if $i}}; {{end}}{{$s}}{{end}}.</p>{{end}}
<h2 id="links">Links</h2>
{{with .LinkNote}}<p class="note">{{.}}</p>{{end}}
{{with .Classes}}<h3>Utilisation by link class</h3>
{{template "table" .}}<p class="note">From link_classes.csv: the mean is weighted by each window's length; the P90 and maximum are the highest of any window.</p>{{end}}
{{range .Links}}<h3>Busiest links: {{.Class}}</h3>
{{template "table" .Links}}{{end}}
{{with .Compare}}<h2 id="compare">Analytical vs event per collective</h2>
{{template "table" .}}{{end}}
<h2 id="layers">Per layer (EndToEnd.csv)</h2>
{{with .Layers}}{{template "table" .}}{{else}}<p class="note">No per-layer table.</p>{{end}}
</body>
</html>
{{define "table"}}<div class="wide"><table>
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{$num := .Num}}{{range .Rows}}<tr>{{range $i, $c := .}}<td{{if num $num $i}} class="n"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table></div>
{{with .Note}}<p class="note">{{.}}</p>{{end}}{{end}}
`))
