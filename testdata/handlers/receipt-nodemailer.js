// A Stripe handler sending its receipt with nodemailer (SMTP, AUTH), for the
// manual trial in docs/probes.md (not run by go test: it needs npm install nodemailer).
// env: PORT SMTP_PORT VARIANT (dedupe|naive)
const http = require('http');
const nodemailer = require('nodemailer');
const transport = nodemailer.createTransport({host: '127.0.0.1', port: +process.env.SMTP_PORT, secure: false,
  ignoreTLS: true, auth: {user: 'shop', pass: 'app-password'}});
const seen = new Set();
http.createServer((req, res) => {
  let body = '';
  req.on('data', c => body += c);
  req.on('end', async () => {
    const ev = JSON.parse(body);
    if (process.env.VARIANT !== 'dedupe' || !seen.has(ev.id)) {
      seen.add(ev.id);
      try {
        await transport.sendMail({from: 'shop@example.com', to: ev.data.object.customer_email, subject: 'Your receipt', text: 'Thanks.'});
      } catch (e) { seen.delete(ev.id); res.statusCode = 500; }
    }
    res.end('ok');
  });
}).listen(+process.env.PORT, '127.0.0.1');
