// An OpenID Connect provider on 127.0.0.1 for tests (npm's oidc-provider with its development login form).
// node provider.mjs PORT REDIRECT_URI
import Provider from 'oidc-provider';

const [port, redirect] = process.argv.slice(2);
const app = new URL(redirect).origin;  // where Streamlit's st.logout returns
const users = {
  alice: { email: 'alice@example.com', email_verified: true, name: 'Alice Example' },
  bob: { email: 'bob@example.com', email_verified: true, name: 'Bob Example' },
};
const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [{
    client_id: 'studio', client_secret: 'studio-test-secret', redirect_uris: [redirect],
    post_logout_redirect_uris: [redirect, app, `${app}/`],  // Streamlit sends its redirect_uri
    response_types: ['code'], grant_types: ['authorization_code'],
  }],
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  conformIdTokenClaims: false,  // name and e-mail in the ID token, where st.user reads them
  features: { devInteractions: { enabled: true } },
  pkce: { required: () => false },
  findAccount: async (ctx, id) => ({
    accountId: id,
    claims: async () => ({ sub: id, ...(users[id] || { name: id }) }),
  }),
});
provider.listen(Number(port), '127.0.0.1', () => console.log(`oidc provider on http://127.0.0.1:${port}`));
