# Checks halo-bench text output (tests.cmake uses it).
#   awk -v mode=pass|fail -v sections=N -f check_output.awk OUTPUT
# A section starts at "# halo-bench NAME: ..."; its rows must all have the
# same number of fields, numbers except a last Pass/Fail when validating, or
# be a single "n/a (...)" line. mode=pass: no Fail, no ERROR, every section
# has rows or n/a. mode=fail (--inject-error): every section that ran shows a
# Fail, which proves its check can fail. sections=N: exactly N sections.
function bad(msg) { printf("check_output: line %d: %s: %s\n", NR, msg, $0); errors++ }
function close_section() {
    if (name == "") return
    if (rows == 0 && !na) { printf("check_output: %s: no result rows\n", name); errors++ }
    if (mode == "fail" && !na && fails == 0) { printf("check_output: %s: the injected error went unseen\n", name); errors++ }
}
/^# halo-bench [a-z0-9_]+:/ {
    close_section()
    name = $3; sub(/:$/, "", name); nsec++
    rows = 0; na = 0; fails = 0; nf = 0; validating = 0
    next
}
/^# Validation: on/ { validating = 1; next }
/^# ERROR/ { if (mode == "pass") bad("error reported"); next }
/^#/ || /^[ \t]*$/ { next }
/^halo-bench / { if (mode == "pass") bad("message on the output"); next }
{
    if (name == "") { bad("row outside a section"); next }
    if ($1 == "n/a") { na = 1; next }
    if (nf == 0) nf = NF
    if (NF != nf) { bad("field count differs from the section's first row"); next }
    last = validating ? NF - 1 : NF
    for (i = 1; i <= last; i++)
        if ($i !~ /^-?[0-9]+(\.[0-9]+)?$/) { bad("field " i " is not a number"); next }
    if (validating) {
        if ($NF == "Fail") { fails++; if (mode == "pass") bad("validation failed") }
        else if ($NF != "Pass") bad("last field is not Pass or Fail")
    }
    rows++
}
END {
    close_section()
    if (sections > 0 && nsec != sections) { printf("check_output: %d sections, expected %d\n", nsec, sections); errors++ }
    if (nsec == 0) { print "check_output: no benchmark output at all"; errors++ }
    if (errors) exit 1
    printf("check_output: %d sections well formed (%s)\n", nsec, mode)
}
