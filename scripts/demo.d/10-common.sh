# demo: calldata and hashes (src/common)
set -euo pipefail
b="$1"
text='{"method": "transfer", "args": [addr#00112233445566778899aabbccddeeff00112233, 1000000000000000000000000], "memo": b#c0ffee}'
echo "calldata text:  $text"
hex=$(printf '%s' "$text" | "$b/tools/genvm-calldata/genvm-calldata" encode --hex)
echo "encoded (hex):  $hex"
echo "decoded again:  $(printf '%s' "$hex" | "$b/tools/genvm-calldata/genvm-calldata" decode --hex)"
echo "blake3:         $(printf '%s' "$text" | "$b/tools/genvm-hash/genvm-hash" blake3)"
echo "sha3-256:       $(printf '%s' "$text" | "$b/tools/genvm-hash/genvm-hash" sha3-256)"
