/** A user of a bench's own server: registered, logged in, its token. */
export async function benchAccount(baseUrl: string, username: string): Promise<string> {
  const password = 'bench-password-1';
  const user = { email: `${username}@example.org`, username, first_name: 'Bench', last_name: username };
  const post = (p: string, body: unknown) =>
    fetch(baseUrl + p, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const registered = await post('/api/auth/register/', { ...user, password, password_confirm: password });
  if (registered.status !== 201) throw new Error(`register: ${registered.status} ${await registered.text()}`);
  const login = await post('/api/auth/login/', { email: user.email, password });
  return ((await login.json()) as { token: string }).token;
}

/** Deletes a file upload of the bench's (its bytes with it), so runs do not fill the disk. */
export async function removeUpload(baseUrl: string, token: string, id: string): Promise<void> {
  const res = await fetch(`${baseUrl}/api/file-uploads/${id}/`, {
    method: 'DELETE',
    headers: { Authorization: `Token ${token}` },
  });
  if (res.status !== 204) throw new Error(`delete: ${res.status} ${await res.text()}`);
}
