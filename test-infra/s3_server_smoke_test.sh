#!/usr/bin/env bash
# The S3 test server answers as S3 does for what Sluice needs: PUT, GET of the same bytes, HEAD, a listing, DELETE;
# a wrong secret gets 403 SignatureDoesNotMatch and an anonymous request 403 (the bucket is private); a multipart
# upload (initiate, two parts, complete) yields the parts' bytes in order.
# shellcheck source=s3_test_lib.sh
. "$(dirname "$0")/s3_test_lib.sh"
url=$SLUICE_S3_ENDPOINT/$SLUICE_S3_BUCKET

# PUT, GET, HEAD.
head -c 3000000 /dev/urandom >"$scratch/object"
expect 200 "PUT $prefix/object" "$(status -T "$scratch/object" "$url/$prefix/object")"
expect 200 "GET $prefix/object" "$(fetch "$scratch/object.got" "$url/$prefix/object")"
cmp -s "$scratch/object" "$scratch/object.got" || fail "GET returned other bytes than were PUT"
s3 -I "$url/$prefix/object" | tr -d '\r' >"$scratch/head"
grep -qi "^content-length: 3000000$" "$scratch/head" || fail "HEAD: no Content-Length 3000000: $(cat "$scratch/head")"
md5=$(md5sum <"$scratch/object" | cut -d' ' -f1)
grep -qi "^etag: \"$md5\"$" "$scratch/head" || fail "HEAD: the ETag is not the MD5 $md5: $(cat "$scratch/head")"

# A wrong secret: 403 SignatureDoesNotMatch, and nothing is written.
wrong=(--aws-sigv4 "aws:amz:$SLUICE_S3_REGION:s3" --user "$SLUICE_S3_ACCESS_KEY:not-the-secret"
       -H "x-amz-content-sha256: UNSIGNED-PAYLOAD")
got=$(curl -sS --max-time 30 "${wrong[@]}" -o "$scratch/denied" -w '%{http_code}' "$url/$prefix/object")
expect 403 "GET with a wrong secret" "$got"
grep -q "<Code>SignatureDoesNotMatch</Code>" "$scratch/denied" || fail "wrong secret: $(cat "$scratch/denied")"
got=$(curl -sS --max-time 30 "${wrong[@]}" -T "$scratch/object" -o /dev/null -w '%{http_code}' "$url/$prefix/denied")
expect 403 "PUT with a wrong secret" "$got"
expect 404 "HEAD of an object PUT with a wrong secret" "$(status -I "$url/$prefix/denied")"
expect 403 "anonymous GET" "$(curl -sS --max-time 30 -o /dev/null -w '%{http_code}' "$url/$prefix/object")"
expect 403 "anonymous listing" "$(curl -sS --max-time 30 -o /dev/null -w '%{http_code}' "$url?list-type=2")"

# Multipart upload: every part but the last must be at least 5 MiB (EntityTooSmall otherwise, as on S3).
head -c $((5 * 1024 * 1024)) /dev/urandom >"$scratch/part1"
head -c 1000 /dev/urandom >"$scratch/part2"
s3 -X POST -o "$scratch/initiate" "$url/$prefix/multipart?uploads="
upload_id=$(sed -n 's:.*<UploadId>\(.*\)</UploadId>.*:\1:p' "$scratch/initiate")
[ -n "$upload_id" ] || fail "initiating a multipart upload: $(cat "$scratch/initiate")"
etags=()
for n in 1 2; do
  etag=$(s3 -T "$scratch/part$n" -D - -o /dev/null "$url/$prefix/multipart?partNumber=$n&uploadId=$upload_id" |
           tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
  [ -n "$etag" ] || fail "part $n: no ETag"
  etags+=("$etag")
done
cat >"$scratch/complete.xml" <<XML
<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>${etags[0]}</ETag></Part><Part><PartNumber>2</PartNumber><ETag>${etags[1]}</ETag></Part></CompleteMultipartUpload>
XML
got=$(fetch "$scratch/complete" -X POST --data-binary "@$scratch/complete.xml" "$url/$prefix/multipart?uploadId=$upload_id")
expect 200 "completing the multipart upload ($(cat "$scratch/complete"))" "$got"
# S3's multipart ETag: the MD5 of the parts' binary MD5s, "-", the number of parts. The quotes may come as XML
# entities (AWS: &quot;, SeaweedFS: &#34;).
want_etag=$(python3 -c 'import hashlib, sys
parts = b"".join(hashlib.md5(open(f, "rb").read()).digest() for f in sys.argv[1:])
print(f"\"{hashlib.md5(parts).hexdigest()}-{len(sys.argv) - 1}\"")' "$scratch/part1" "$scratch/part2")
sed -e 's/&quot;/"/g' -e 's/&#34;/"/g' "$scratch/complete" | grep -qF "<ETag>$want_etag</ETag>" ||
  fail "the completed upload's ETag is not $want_etag: $(cat "$scratch/complete")"
expect 200 "GET $prefix/multipart" "$(fetch "$scratch/multipart.got" "$url/$prefix/multipart")"
cat "$scratch/part1" "$scratch/part2" | cmp -s - "$scratch/multipart.got" ||
  fail "the multipart object's bytes are not part 1 then part 2"

# A listing by prefix (the "/" of the prefix percent-encoded: curl signs the query as written).
s3 -o "$scratch/list" "$url?list-type=2&prefix=$prefix%2F"
for key in object multipart; do
  grep -q "<Key>$prefix/$key</Key>" "$scratch/list" || fail "listing: no $prefix/$key in $(cat "$scratch/list")"
done

# DELETE.
for key in object multipart; do
  expect 204 "DELETE $prefix/$key" "$(status -X DELETE "$url/$prefix/$key")"
  expect 404 "GET $prefix/$key after DELETE" "$(status "$url/$prefix/$key")"
done
echo "s3 smoke: $SLUICE_S3_ENDPOINT bucket $SLUICE_S3_BUCKET: PUT/GET/HEAD/list/DELETE, 403 for a wrong secret and anonymous requests, multipart upload ok"
