# Firefox "Copy as cURL (POSIX)" and hand-written commands, one after another.
curl 'http://localhost:3000/hooks/generic' -X POST -H 'User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0' -H 'Accept: */*' -H 'Content-Type: application/json' -H 'Origin: http://localhost:3000' -H 'Connection: keep-alive' --data-raw '{"a":1}'

curl -sS -XPUT "http://user:p%40ss@127.0.0.1:8080/put" -H "X-Double: \"quoted\" \$5" \
     -d @form.txt -d 'b=2' ; curl --url http://example.test/get -G -d q=1 --data-urlencode 'name=J Doe&co' -A 'hand/1.0' -H 'X-Empty;' -H 'Accept:'
curl -s http://example.test/binary --data-binary @binary.bin -H 'Content-Type: application/octet-stream'
