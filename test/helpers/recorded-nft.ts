// A stand-in nft (named as one) answering the nftables probe's reads from one recorded scenario under
// test/fixtures/netfilter/recorded/, byte for byte. Any read the probe must never make (`list ruleset`,
// `list tables`, `list chain`: seconds to a minute at 10,000 Services on nft 1.0.6) exits 99. A set with
// no recording answers as nft does for one that is gone. `fail`: that one argv fails as a busy kernel would.
const REC = new URL("../fixtures/netfilter/recorded/", import.meta.url);

export const recordedNftScript = (scenario: string, fail = "") => `#!/bin/sh
d='${new URL(scenario + "/", REC).pathname}'
[ -n '${fail}' ] && [ "$*" = '${fail}' ] && { echo "Error: Could not process rule: Device or resource busy" >&2; exit 1; }
case "$*" in
  "-j list chains") /bin/cat "$d/nft-list-chains.json" ;;
  "-j -t list sets"|"-j -t list maps") set -- $*; /bin/cat "$d/nft-list-t-$4.json" ;;
  "-j list set "*|"-j list map "*)
    set -- $*; f="$d/nft-list-$3-$4-$5-$6.json"
    if [ -f "$f" ]; then /bin/cat "$f"; else echo "Error: No such file or directory" >&2; exit 1; fi ;;
  *) echo "unexpected nft $*" >&2; exit 99 ;;
esac
`;
